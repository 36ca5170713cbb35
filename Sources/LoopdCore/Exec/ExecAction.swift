import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// An `exec` action from the config: a fixed argv (never a shell), optional
/// client arguments appended as separate argv entries, a clean environment,
/// a working directory, a timeout and an output cap; and its containment
/// (`ExecContainment`): who the children run as, their limits, their
/// cgroup. The job's process tree is watched by the worker's loop
/// (`ExecRun`).
struct ExecAction: JobAction {
    let name: String
    let spec: DaemonConfig.Exec
    let containment: ExecContainment
    let supervisor: ExecSupervisor

    var defaultTimeoutMs: Int64? { spec.timeoutMs }

    func validate(args: [String]) throws(ProtocolError) {
        guard args.count <= spec.maxClientArgs else {
            throw ProtocolError(.badRequest, spec.maxClientArgs == 0
                ? "action \(name) takes no arguments"
                : "action \(name) takes at most \(spec.maxClientArgs) arguments, got \(args.count)")
        }
    }

    func start(_ context: ActionContext) {
        var command = ChildProcess.Contained(argv: spec.argv + context.args, environment: spec.env, workingDirectory: spec.cwd)
        command.identity = containment.identity
        command.limits = containment.rlimits
        command.landlockScope = containment.landlockScope
        var cgroup: Cgroup?
        var procs: Int32?
        if let cgroups = supervisor.cgroups {
            do {
                let group = try cgroups.makeGroup(limits: containment.cgroupLimits)
                cgroup = group
                procs = try group.openProcs()
            } catch {
                if let cgroup { try? cgroup.remove() }
                context.complete(.failure(ProtocolError(.jobFailed, "cannot make the job's cgroup: \(error)"), result: .object([])))
                return
            }
        }
        command.cgroupProcs = procs
        let started: ChildProcess.Started
        do {
            started = try ChildProcess.spawn(command)
        } catch {
            if let procs { Descriptor.close(procs) }
            if let cgroup { try? cgroup.remove() }
            context.complete(.failure(ProtocolError(.jobFailed, "cannot start \(spec.argv[0]): \(error)"), result: .object([])))
            return
        }
        if let procs { Descriptor.close(procs) }
        let tree = ExecTree(leader: started.pid, cgroup: cgroup, cgroups: supervisor.cgroups)
        ExecRun(context: context, action: self, child: started, tree: tree).begin()
    }
}

/// Keeps the first `cap` bytes of a stream and counts the rest.
struct CappedBuffer {
    var cap = 65_536
    var bytes: [UInt8] = []
    var truncated = false

    mutating func append(_ chunk: ArraySlice<UInt8>) {
        let room = cap - bytes.count
        if chunk.count <= room {
            bytes.append(contentsOf: chunk)
        } else {
            bytes.append(contentsOf: chunk.prefix(max(room, 0)))
            truncated = true
        }
    }

    /// The kept bytes as text; invalid UTF-8 is replaced, never rejected.
    var text: String { String(decoding: bytes, as: UTF8.self) }
}
