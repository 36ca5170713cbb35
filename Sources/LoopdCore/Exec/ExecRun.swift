import Glibc
import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// One exec job on its worker's loop, from the start of its main process to
/// the end of its whole tree. Worker thread only.
///
/// ```
///  running ──main process exits──▶ draining ──both pipes closed, or──▶ finished
///     │                              ▲        output_drain_ms passed
///     └─ timeout, cancel, shutdown:  │
///        SIGTERM to the tree, SIGKILL after kill_grace_ms
/// ```
///
/// The job ends when its main process does, as a transient service does:
/// output still arriving from what it left running is read for
/// `output_drain_ms`, then the pipes are closed, the rest of the tree is
/// killed, the main process is reaped, and the job completes. A grandchild
/// that holds a pipe open can neither keep the job running nor pin the
/// worker. A tree without a cgroup is signalled as a process group, and
/// its main process stays unreaped until the last such signal, so that its
/// zombie keeps the group's id from going to anyone else; a cgroup needs no
/// id, and is killed once the main process is reaped.
final class ExecRun: @unchecked Sendable {
    enum Phase {
        case running
        case draining(ProcessExit)
        case finished
    }

    let context: ActionContext
    let action: ExecAction
    let child: ChildProcess.Started
    let tree: ExecTree
    private var phase = Phase.running
    private var stdout = CappedBuffer()
    private var stderr = CappedBuffer()
    private var pipes: [LoopFileDescriptorSource?] = [nil, nil]
    private var openPipes = 2
    private var exitWatch: LoopProcessSource?
    private var killTimer: LoopTimer?
    private var drainTimer: LoopTimer?
    /// A timeout or a cancel signalled the tree while the main process ran:
    /// the job ends with that reason, however the process then exits.
    private var stopped = false
    /// loopd is stopping: the tree is killed, but the job does not end.
    private var abandoned = false
    /// Why the main process's exit could not be watched (it was killed at once).
    private var unwatched: String?

    init(context: ActionContext, action: ExecAction, child: ChildProcess.Started, tree: ExecTree) {
        self.context = context
        self.action = action
        self.child = child
        self.tree = tree
        stdout.cap = action.spec.outputCapBytes
        stderr.cap = action.spec.outputCapBytes
    }

    private var loop: Loop { context.loop }
    private var spec: DaemonConfig.Exec { action.spec }

    func begin() {
        action.supervisor.treeStarted()
        for (index, fd) in [child.stdout, child.stderr].enumerated() {
            let source = LoopFileDescriptorSource(fileDescriptor: fd, interest: .readable) { [self] _ in
                drain(pipe: index)
            }
            pipes[index] = source
            loop.add(source, forMode: .common)
        }
        do {
            let watch = try LoopProcessSource(leavingZombie: child.pid) { [self] exit in mainExited(exit) }
            exitWatch = watch
            loop.add(watch, forMode: .common)
        } catch {
            // Without a pidfd the exit cannot be watched: end the tree now,
            // and reap the main process here (it is left unreaped elsewhere).
            unwatched = "cannot watch \(spec.argv[0]), so it was killed: \(error)"
            tree.kill()
            ChildProcess.killAndReap(child.pid)
            phase = .draining(.signalled(SIGKILL))
            finish()
            return
        }
        context.onTimeout = { [self] in stop() }
        context.onCancel = { [self] in stop() }
        context.onShutdown = { [self] in
            switch phase {
            case .running:
                abandoned = true
                stop()
            case .draining:
                // The main process has ended, and the job with it: what the
                // rest of the tree still writes is no longer waited for.
                finish()
            case .finished:
                break
            }
        }
    }

    /// Reads what a pipe has; at its end (or on an error) closes it.
    private func drain(pipe index: Int) {
        guard let source = pipes[index] else { return }
        let fd = source.fileDescriptor
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            switch chunk.withUnsafeMutableBytes({ Descriptor.read(fd, into: $0) }) {
            case .bytes(let n):
                if index == 0 { stdout.append(chunk[0..<n]) } else { stderr.append(chunk[0..<n]) }
            case .wouldBlock:
                return
            case .endOfFile, .failed:
                closePipe(index)
                if case .draining = phase, openPipes == 0 { finish() }
                return
            }
        }
    }

    private func closePipe(_ index: Int) {
        guard let source = pipes[index] else { return }
        source.invalidate()
        Descriptor.close(source.fileDescriptor)
        pipes[index] = nil
        openPipes -= 1
    }

    /// The main process has ended. It is left a zombie (see the type's
    /// comment) and its output drained.
    private func mainExited(_ exit: ProcessExit) {
        guard case .running = phase else { return }
        phase = .draining(exit)
        if openPipes == 0 {
            finish()
            return
        }
        let drain = LoopTimer(after: .milliseconds(action.containment.outputDrainMs)) { [self] _ in finish() }
        drainTimer = drain
        loop.add(drain, forMode: .common)
    }

    /// A timeout, a cancel or a shutdown: SIGTERM to the tree now, SIGKILL
    /// after the action's grace; the job ends once the main process has.
    private func stop() {
        // A main process that already exited on its own keeps its own outcome.
        guard case .running = phase else { return }
        stopped = true
        tree.terminate()
        guard killTimer == nil else { return }
        let grace = LoopTimer(after: .milliseconds(spec.killGraceMs)) { [self] _ in tree.kill() }
        killTimer = grace
        loop.add(grace, forMode: .common)
    }

    /// Closes the pipes, kills what is left of the tree, reaps the main
    /// process and completes the job with its exit, output and usage.
    private func finish() {
        guard case .draining(let exit) = phase else { return }
        phase = .finished
        drainTimer?.invalidate()
        killTimer?.invalidate()
        closePipe(0)
        closePipe(1)
        // A process group is signalled while the main process's zombie
        // still holds its id; a cgroup once that is reaped (below).
        if tree.cgroup == nil { tree.kill() }
        let reaped = SignalPlatform.reapWithUsage(child.pid)
        context.usage = usage(reaped: reaped?.usage)
        if !tree.removeOrKill() { removeCgroup(attempt: 1) }
        action.supervisor.treeEnded()
        releaseWhenDone()
        guard !abandoned else { return }
        context.complete(outcome(exit))
    }

    /// The tree's CPU time and peak memory from its cgroup, else the main
    /// process's CPU time from wait4. Never wait4's peak: the child ran in
    /// loopd's memory until it executed, and the kernel counts loopd's
    /// resident set as that peak.
    private func usage(reaped: SignalPlatform.ReapedUsage?) -> JobUsage? {
        if let tree = tree.cgroupUsage(), let cpu = tree.cpu {
            return JobUsage(cpuUserUsec: cpu.user, cpuSystemUsec: cpu.system, memoryPeakBytes: tree.memoryPeak,
                            source: .cgroup)
        }
        guard let reaped else { return nil }
        return JobUsage(cpuUserUsec: reaped.userMicroseconds, cpuSystemUsec: reaped.systemMicroseconds,
                        memoryPeakBytes: nil, source: .rusage)
    }

    private func outcome(_ exit: ProcessExit) -> ActionOutcome {
        var result: [(String, JSON)] = []
        switch exit {
        case .exited(let code):
            result.append(("exit_code", .integer(Int64(code))))
            result.append(("signal", .null))
        case .signalled(let sig):
            result.append(("exit_code", .null))
            result.append(("signal", .integer(Int64(sig))))
        }
        result += [
            ("stdout", .string(stdout.text)), ("stderr", .string(stderr.text)),
            ("stdout_truncated", .bool(stdout.truncated)), ("stderr_truncated", .bool(stderr.truncated)),
        ]
        let json = JSON.object(result)
        if let unwatched { return .failure(ProtocolError(.jobFailed, unwatched), result: json) }
        if stopped, let reason = context.stopReason {
            let message = reason.code == .timeout
                ? "\(spec.argv[0]) ran past its timeout and was stopped (\(exit))"
                : "\(reason.message); \(spec.argv[0]) \(exit)"
            return .failure(ProtocolError(reason.code, message), result: json)
        }
        if exit == .exited(0) { return .success(json) }
        return .failure(ProtocolError(.jobFailed, "\(spec.argv[0]) \(exit)"), result: json)
    }

    /// Removes the job's cgroup once the killed processes have left it,
    /// looking every 10 ms for up to 5 s and killing again what is still
    /// there (without `cgroup.kill`, a process forked after the last pass);
    /// after that the group is left for the next start of loopd to remove
    /// (`JobCgroups.removeLeftovers`).
    private func removeCgroup(attempt: Int) {
        guard attempt <= 500 else { return }
        let retry = LoopTimer(after: .milliseconds(10)) { [self] _ in
            if !tree.removeOrKill() { removeCgroup(attempt: attempt + 1) }
        }
        loop.add(retry, forMode: .common)
    }

    /// The handlers of the pipes, the exit watch and the timers hold this
    /// run strongly: that is what keeps it alive while the job runs. Once it
    /// is over they are dropped, or every exec job would leak its run.
    /// Dropped on a later turn of the loop, because one of those handlers
    /// is running the call that gets here.
    private func releaseWhenDone() {
        loop.perform(inModes: [.common]) { [self] in
            pipes = [nil, nil]
            exitWatch = nil
            killTimer = nil
            drainTimer = nil
        }
    }
}
