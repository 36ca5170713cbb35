import LoopPlatform

/// How a child process ended.
public enum ProcessExit: Sendable, Equatable, CustomStringConvertible {
    /// It called exit with this status.
    case exited(Int32)
    /// A signal killed it.
    case signalled(Int32)

    /// The exit a wait(2) status describes (`WIFEXITED`/`WEXITSTATUS`,
    /// else `WTERMSIG`).
    public init(waitStatus s: Int32) {
        let sig = s & 0x7f
        self = sig == 0 ? .exited((s >> 8) & 0xff) : .signalled(sig)
    }

    /// `"exited with status 0"` or `"killed by signal 9"`.
    public var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signalled(let sig): "killed by signal \(sig)"
        }
    }
}

/// A version-1 source that fires once when a child process exits, through a
/// pidfd; it reaps the child (unless made with `init(leavingZombie:order:_:)`) and
/// invalidates itself. Signals sent through it cannot hit a recycled pid.
public final class LoopProcessSource: @unchecked Sendable {
    /// The child's process id.
    public let pid: Int32
    private let fd: Int32
    let core: KernelSource

    /// Watches child `pid` (which must be a child of this process, not yet
    /// reaped); `handler` runs on the loop's thread with its exit.
    public convenience init(pid: Int32, order: Int = 0, _ handler: @escaping @Sendable (ProcessExit) -> Void) throws(PlatformError) {
        try self.init(pid: pid, order: order, reaping: true) { status in handler(ProcessExit(waitStatus: status)) }
    }

    /// Watches child `pid` without reaping it: `handler` runs on the loop's
    /// thread with its exit, and the child stays a zombie until the caller
    /// reaps it (waitpid(2) or wait4(2)). Until then its pid, and the id of
    /// a process group it leads, cannot be given to another process, so the
    /// group can still be signalled safely.
    public convenience init(leavingZombie pid: Int32, order: Int = 0,
                            _ handler: @escaping @Sendable (ProcessExit) -> Void) throws(PlatformError) {
        try self.init(pid: pid, order: order, reaping: false) { status in handler(ProcessExit(waitStatus: status)) }
    }

    private init(pid: Int32, order: Int, reaping: Bool, _ handler: @escaping @Sendable (Int32) -> Void) throws(PlatformError) {
        self.pid = pid
        let fd = try SignalPlatform.openPidFD(pid)
        self.fd = fd
        let owner = WeakOwner<LoopProcessSource>()
        core = KernelSource(fd: fd, interest: .readable, order: order, closesDescriptor: true,
                            label: { "process source pid = \(pid)" },
                            handler: { _, _ in
                                let ended = reaping ? SignalPlatform.reap(pid) : SignalPlatform.endedWithoutReaping(pid)
                                guard let status = ended else { return }
                                owner.value?.invalidate()
                                handler(status)
                            })
        owner.value = self
        core.adopt(owner: self)
    }

    /// Sends `signal` to the child, unless it has been reaped already. Call it
    /// on the source's loop thread, where the exit is delivered, so the pidfd
    /// cannot be closed underneath the call.
    public func send(signal: Int32) throws(PlatformError) {
        guard core.isValid else { return }
        try SignalPlatform.sendSignal(pidfd: fd, signal)
    }

    /// False once the exit was delivered or the source invalidated.
    public var isValid: Bool { core.isValid }

    /// Stops watching and closes the pidfd (the child is not reaped).
    public func invalidate() {
        core.invalidate()
    }

    deinit { invalidate() }
}

extension Loop {
    /// Adds a process source to `mode` (or every common mode).
    public func add(_ source: LoopProcessSource, forMode mode: Mode) { add(source.core, forMode: mode) }
    /// Removes a process source from `mode`.
    public func remove(_ source: LoopProcessSource, forMode mode: Mode) { remove(source.core, forMode: mode) }
}
