import LoopPlatform
import Synchronization

/// A resident thread (R26): a thread whose loop a port keeps
/// alive, running `run(mode:timeout:)` over and over until `stop()`.
///
/// ```swift
/// let worker = LoopThread(name: "w1")
/// worker.perform { print("on w1") }
/// let token = worker.perform(afterDelay: .milliseconds(50)) { print("later") }
/// worker.cancelPerform(token)
/// worker.stop()   // runs the stop on w1, then joins it
/// ```
public final class LoopThread: @unchecked Sendable {
    /// The thread's name (also given to the kernel, cut to 15 bytes).
    public let name: String
    /// The thread's loop.
    public let loop: Loop
    private let control: ThreadControl
    private let thread: NativeThread

    /// Starts the thread and returns once its loop is running.
    /// - Parameters:
    ///   - name: the thread's name; the kernel gets its first 15 bytes.
    ///   - mode: the mode its loop runs in; change it with `setRunMode(_:)`.
    ///   - clock: the loop's clock (`.manual` for deterministic tests).
    ///   - spinBeforeSleeping: opt-in busy-wait before each sleep, trading
    ///     up to this much CPU per sleep for cheaper, faster wake-ups; off by
    ///     default. See `Loop.spinBeforeSleeping` for what it costs.
    public init(name: String, mode: Loop.Mode = .default, clock: LoopClock = .system,
                spinBeforeSleeping: Duration = .zero) {
        precondition(mode != .common, "a LoopThread runs a real mode, not .common")
        self.name = name
        let control = ThreadControl(name: name, mode: mode, clock: clock)
        self.control = control
        thread = NativeThread { control.threadMain() }
        control.started.wait()
        loop = control.startedLoop!
        loop.spinBeforeSleeping = spinBeforeSleeping
    }

    /// The mode the thread's loop runs in.
    public var runMode: Loop.Mode { control.lock.withLock { control.mode } }

    /// Switches the mode the loop runs in: the current run returns and the
    /// next one runs `mode`. Blocks and sources of other modes wait (R5, R24).
    /// - Parameters:
    ///   - mode: the mode to run from now on; a real mode, not `.common`.
    ///   - switched: called on the thread once the switch is in
    ///     effect (no run of the old mode will start again), just before the
    ///     first run in `mode`; also called if the thread stops first.
    public func setRunMode(_ mode: Loop.Mode, switched: (@Sendable () -> Void)? = nil) {
        precondition(mode != .common, "a LoopThread runs a real mode, not .common")
        control.lock.withLock {
            control.mode = mode
            if let switched { control.modeWaiters.append(switched) }
        }
        loop.add(control.port!, forMode: mode)
        control.port!.send(id: ThreadControl.recheck)
    }

    /// Whether the thread is still running its loop (false from `stop()` on).
    public var isRunning: Bool { control.accepting.load(ordering: .acquiring) }

    /// Queues `block` on the thread's loop for a pass of one of `modes`
    /// (nil: the common modes), in order with every other request (R23).
    /// With `waitUntilDone`, blocks until it has run, and runs it directly
    /// when called on the thread itself. Returns false, without running it,
    /// once the thread has stopped; a waiting call also returns false if the
    /// thread exits before running the block (queued as it stopped, or for a
    /// mode it never ran again).
    @discardableResult
    public func perform(waitUntilDone: Bool = false, modes: [Loop.Mode]? = nil,
                        _ block: consuming @escaping @Sendable () -> Void) -> Bool {
        guard isRunning else { return false }
        if !waitUntilDone {
            loop.perform(inModes: modes, block)
            return true
        }
        if loop.isCurrentThread {
            block()
            return true
        }
        guard let wait = control.registerWait() else { return false }
        let control = self.control
        let work = block  // a consuming parameter is mutable; the closure captures a constant
        loop.perform(inModes: modes) {
            work()
            control.finish(wait, ran: true)
        }
        return wait.wait()
    }

    /// Runs `block` once, `delay` from now, on the thread's loop in `modes`
    /// (nil: the common modes): a one-shot timer (R25). Requests due at the
    /// same instant run in the order they were made.
    @discardableResult
    public func perform(afterDelay delay: Duration, modes: [Loop.Mode]? = nil,
                        _ block: @escaping @Sendable () -> Void) -> PerformToken {
        loop.perform(afterDelay: delay, modes: modes, block)
    }

    /// Cancels a delayed request; returns true if it had not run yet (it then never will).
    @discardableResult
    public func cancelPerform(_ token: PerformToken) -> Bool { token.cancel() }

    /// Stops the thread: a request performed on the thread sets its stop
    /// flag and stops its loop; then the caller joins the thread (R26).
    /// Requests queued before `stop()` for the running mode still run.
    /// Called on the thread itself, it stops without joining.
    public func stop() {
        let first = control.lock.withLock { () -> Bool in
            guard control.state == .running else { return false }
            control.state = .stopping
            control.accepting.store(false, ordering: .releasing)
            return true
        }
        if first { control.port!.send(id: ThreadControl.stop) }
        if loop.isCurrentThread {
            if first { thread.detach() }
            return
        }
        if first { thread.join() } else { control.exited.wait() }
    }

    deinit {
        if isRunning { stop() }
    }
}

/// What a `LoopThread` and its thread share.
final class ThreadControl: @unchecked Sendable {
    enum State { case running, stopping, stopped }
    static let recheck: Int32 = 1
    static let stop: Int32 = 2

    let name: String
    let clock: LoopClock
    let lock = Lock()
    var mode: Loop.Mode        // guarded by lock
    var state = State.running  // guarded by lock
    /// Callbacks of `setRunMode(_:switched:)` not yet run. Guarded by lock.
    var modeWaiters: [@Sendable () -> Void] = []
    /// Callers of `perform(waitUntilDone: true)` whose block has not run,
    /// by key; abandoned when the thread exits. Guarded by lock.
    private var waits: [UInt64: PerformWait] = [:]
    private var nextWaitKey: UInt64 = 0  // guarded by lock
    /// `state == .running`, readable without the lock on the perform path. Any thread.
    let accepting = Atomic<Bool>(true)
    /// Set by the thread before `started` opens; read-only afterwards.
    var startedLoop: Loop?
    var port: LoopPort?
    let started = Latch()
    let exited = Latch()

    init(name: String, mode: Loop.Mode, clock: LoopClock) {
        self.name = name
        self.mode = mode
        self.clock = clock
    }

    func threadMain() {
        setCurrentThreadName(name)
        let loop = Loop.current
        if case .manual = clock { loop.clock = clock }
        let port = LoopPort(order: Int.min) { [unowned self] message in
            if message.id == ThreadControl.stop { lock.withLock { state = .stopped } }
            loop.stop()
        }
        loop.add(port, forMode: .common)
        startedLoop = loop
        self.port = port
        started.open()

        while true {
            let (mode, state, waiters) = lock.withLock { () -> (Loop.Mode, State, [@Sendable () -> Void]) in
                defer { modeWaiters.removeAll() }
                return (self.mode, self.state, modeWaiters)
            }
            for w in waiters { w() }
            if state == .stopped { break }
            loop.add(port, forMode: mode)
            loop.run(mode: mode, timeout: nil)
        }
        port.invalidate()
        for w in lock.withLock({ modeWaiters }) { w() }
        // No block runs on this thread any more: release every waiting caller.
        let abandoned = lock.withLock { () -> [PerformWait] in
            defer { waits.removeAll() }
            return Array(waits.values)
        }
        for w in abandoned { w.finish(ran: false) }
        exited.open()
    }

    /// A new registered wait, or nil once the thread is stopping (its block
    /// might never run).
    func registerWait() -> PerformWait? {
        lock.withLock {
            guard state == .running else { return nil }
            nextWaitKey += 1
            let wait = PerformWait(key: nextWaitKey)
            waits[wait.key] = wait
            return wait
        }
    }

    /// The block of `wait` ran (or, from the exit path, never will).
    func finish(_ wait: PerformWait, ran: Bool) {
        lock.withLock { waits[wait.key] = nil }
        wait.finish(ran: ran)
    }
}
