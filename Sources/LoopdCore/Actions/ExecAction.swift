import LoopPlatform
import Glibc
import LoopRuntime
import LoopdProtocol

/// An `exec` action from the config: a fixed argv (never a shell), optional
/// client arguments appended as separate argv entries, a clean environment,
/// a working directory, a timeout (SIGTERM, then SIGKILL) and an output cap.
/// The child's stdout, stderr and exit are watched by the worker's loop.
struct ExecAction: JobAction {
    let name: String
    let spec: DaemonConfig.Exec

    var defaultTimeoutMs: Int64? { spec.timeoutMs }

    func validate(args: [String]) throws(ProtocolError) {
        guard args.count <= spec.maxClientArgs else {
            throw ProtocolError(.badRequest, spec.maxClientArgs == 0
                ? "action \(name) takes no arguments"
                : "action \(name) takes at most \(spec.maxClientArgs) arguments, got \(args.count)")
        }
    }

    func start(_ context: ActionContext) {
        let started: ChildProcess.Started
        do {
            started = try ChildProcess.spawn(argv: spec.argv + context.args, env: spec.env, cwd: spec.cwd)
        } catch {
            context.complete(.failure(ProtocolError(.jobFailed, "cannot start \(spec.argv[0]): \(error)"), result: .object([])))
            return
        }
        ExecRun(context: context, spec: spec, child: started).begin()
    }
}

/// One running child: its two output pipes and its pidfd, all sources on
/// the worker's loop. The job completes once the child has exited and both
/// pipes reached end of file. Worker thread only.
private final class ExecRun: @unchecked Sendable {
    let context: ActionContext
    let spec: DaemonConfig.Exec
    let child: ChildProcess.Started
    var stdout = CappedBuffer()
    var stderr = CappedBuffer()
    var exit: ProcessExit?
    var openPipes = 2
    var sources: [LoopFileDescriptorSource] = []
    var process: LoopProcessSource?
    var killTimer: LoopTimer?
    /// A timeout or a cancel signalled the child while it still ran: the
    /// job ends with that reason, however the child then exits.
    var stopped = false

    init(context: ActionContext, spec: DaemonConfig.Exec, child: ChildProcess.Started) {
        self.context = context
        self.spec = spec
        self.child = child
        stdout.cap = spec.outputCapBytes
        stderr.cap = spec.outputCapBytes
    }

    func begin() {
        for (fd, isOut) in [(child.stdout, true), (child.stderr, false)] {
            let source = LoopFileDescriptorSource(fileDescriptor: fd, interest: .readable) { [self] _ in
                drain(fd: fd, isOut: isOut)
            }
            sources.append(source)
            context.loop.add(source, forMode: .common)
        }
        do {
            let p = try LoopProcessSource(pid: child.pid) { [self] status in
                exit = status
                finishIfDone()
            }
            process = p
            context.loop.add(p, forMode: .common)
        } catch {
            // Without a pidfd the child cannot be watched: kill it outright.
            ChildProcess.killAndReap(child.pid)
            exit = ProcessExit.signalled(SIGKILL)
        }
        context.onTimeout = { [self] in terminate() }
        context.onCancel = { [self] in terminate() }
    }

    private func drain(fd: Int32, isOut: Bool) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            switch chunk.withUnsafeMutableBytes({ Descriptor.read(fd, into: $0) }) {
            case .bytes(let n):
                if isOut { stdout.append(chunk[0..<n]) } else { stderr.append(chunk[0..<n]) }
            case .wouldBlock:
                return
            case .endOfFile, .failed:
                // A read error ends the stream the same way as end of file.
                let index = isOut ? 0 : 1
                sources[index].invalidate()
                Descriptor.close(fd)
                openPipes -= 1
                finishIfDone()
                return
            }
        }
    }

    /// A timeout or a cancel: SIGTERM now, SIGKILL after the action's
    /// grace period; the job ends once the child is reaped (pidfd).
    private func terminate() {
        // A child that already exited on its own keeps its own outcome.
        guard exit == nil else { return }
        stopped = true
        try? process?.send(signal: SIGTERM)
        let grace = LoopTimer(after: .milliseconds(spec.killGraceMs)) { [self] _ in
            try? process?.send(signal: SIGKILL)
        }
        killTimer = grace
        context.loop.add(grace, forMode: .common)
    }

    private func finishIfDone() {
        guard let exit, openPipes == 0 else { return }
        killTimer?.invalidate()
        releaseWhenDone()
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
        if stopped, let reason = context.stopReason {
            let message = reason.code == .timeout
                ? "\(spec.argv[0]) ran past its timeout and was stopped (\(exit))"
                : "\(reason.message); \(spec.argv[0]) \(exit)"
            context.complete(.failure(ProtocolError(reason.code, message), result: json))
        } else if exit == .exited(0) {
            context.complete(.success(json))
        } else {
            context.complete(.failure(ProtocolError(.jobFailed, "\(spec.argv[0]) \(exit)"), result: json))
        }
    }
}

extension ExecRun {
    /// The handlers of `sources`, `process` and `killTimer` hold this run
    /// strongly: that is what keeps it alive while the child runs. Once it
    /// is over they are dropped, or every exec job leaked its run, sources
    /// and output (bug: exec-run-leak). Dropped on a later turn of the loop,
    /// because one of those handlers is running the call that gets here.
    fileprivate func releaseWhenDone() {
        context.loop.perform(inModes: [.common]) { [self] in
            sources = []
            process = nil
            killTimer = nil
        }
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
