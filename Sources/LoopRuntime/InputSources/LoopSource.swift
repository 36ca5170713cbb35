import Synchronization

/// A version-0 (custom) input source: it fires on its loop's thread after
/// `signal()` marks it ready and the loop is woken (R8).
///
/// ```swift
/// let source = LoopSource(order: 0) { print("signalled") }
/// loop.add(source, forMode: .default)
/// source.signal(); loop.wakeUp()
/// ```
public final class LoopSource: @unchecked Sendable {
    /// Among ready sources, lower orders fire first (R10).
    public let order: Int
    let sequence = nextItemSequence()
    let performHandler: @Sendable () -> Void
    let scheduleHandler: (@Sendable (Loop, Loop.Mode) -> Void)?
    let cancelHandler: (@Sendable (Loop, Loop.Mode) -> Void)?
    let links = ItemLinks()
    private let signalled = Atomic<Bool>(false)  // any thread
    private let valid = Atomic<Bool>(true)       // any thread

    /// Creates a source.
    /// - Parameters:
    ///   - order: firing order among ready sources; lower first.
    ///   - schedule: called when the source is added to a loop's mode, on the adding thread.
    ///   - cancel: called when it is removed from a mode or invalidated, on the removing thread.
    ///   - perform: the handler, run on the loop's thread once per signal.
    public init(order: Int = 0,
                schedule: (@Sendable (Loop, Loop.Mode) -> Void)? = nil,
                cancel: (@Sendable (Loop, Loop.Mode) -> Void)? = nil,
                perform: @escaping @Sendable () -> Void) {
        self.order = order
        self.scheduleHandler = schedule
        self.cancelHandler = cancel
        self.performHandler = perform
    }

    /// Marks the source ready; it fires on the next pass of a loop running one
    /// of its modes. Signalling twice before it fires fires it once. Safe from
    /// any thread; call the loop's `wakeUp()` too if it may be asleep.
    public func signal() { signalled.store(true, ordering: .releasing) }

    /// Whether the source is signalled and has not fired yet.
    public var isSignalled: Bool { signalled.load(ordering: .acquiring) }

    /// False once invalidated.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes the source from every mode of every loop; it never fires again (R11).
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for loop in links.takeAll() { loop.detach(self) }
    }

    /// Consumes the signal: true if the source should fire now.
    func consumeSignal() -> Bool {
        signalled.load(ordering: .relaxed) && signalled.exchange(false, ordering: .acquiringAndReleasing)
    }
}
