import LoopPlatform

/// A timer that fires on its loop's thread, once or on a repeating grid.
///
/// A repeating timer keeps to its grid (`start + k·interval`): when the loop
/// was busy past one or more grid points it fires once, then continues at the
/// next grid point in the future, never in a burst (R13). `tolerance` lets the
/// loop fire it up to that much late to share a wake-up with other timers; it
/// never fires early (R14). A one-shot timer invalidates itself after firing
/// (R15). A timer belongs to one loop, in as many of its modes as you like.
public final class LoopTimer: @unchecked Sendable {
    /// Time between grid points; `nil` for a one-shot timer.
    public let interval: Duration?
    /// `interval` in whole nanoseconds (at least 1), worked out once: the
    /// grid step of every reschedule (R13).
    private let step: UInt64?
    let sequence = nextItemSequence()
    let handler: @Sendable (LoopTimer) -> Void
    // Guarded by lock. When also holding the owning loop's lock, take the
    // loop's first.
    let lock = Lock()
    private var state: TimerState

    struct TimerState {
        /// Until first added to a loop, the delay counted from that moment.
        var pendingDelay: Duration?
        var fireDate: LoopInstant?
        var tolerance: Duration
        /// Bumped on every reschedule; heap entries from older generations are stale.
        var generation: UInt64 = 0
        var valid = true
        /// Its handler is running: a nested run in another of its modes
        /// passes it over, as Core Foundation does (R12, R15).
        var firing = false
        weak var loop: Loop?

        /// Whether a heap entry still describes this schedule.
        func describes(_ entry: TimerHeap.Entry) -> Bool { valid && generation == entry.generation }
    }

    /// A timer first due `after` the moment it is added to a loop, then every
    /// `interval` (nil: once).
    public init(after delay: Duration, interval: Duration? = nil, tolerance: Duration = .zero,
                _ handler: @escaping @Sendable (LoopTimer) -> Void) {
        precondition(interval.map { $0 > .zero } ?? true, "a repeating LoopTimer needs a positive interval")
        self.interval = interval
        self.step = interval.map { max($0.nanosecondsClamped, 1) }
        self.handler = handler
        self.state = TimerState(pendingDelay: delay, fireDate: nil, tolerance: max(tolerance, .zero))
    }

    /// A timer first due at `fireDate` on its loop's clock, then every `interval`.
    public init(fireDate: LoopInstant, interval: Duration? = nil, tolerance: Duration = .zero,
                _ handler: @escaping @Sendable (LoopTimer) -> Void) {
        precondition(interval.map { $0 > .zero } ?? true, "a repeating LoopTimer needs a positive interval")
        self.interval = interval
        self.step = interval.map { max($0.nanosecondsClamped, 1) }
        self.handler = handler
        self.state = TimerState(pendingDelay: nil, fireDate: fireDate, tolerance: max(tolerance, .zero))
    }

    /// The next instant it is due; nil before it was added to a loop (for a
    /// delay-based timer) and after invalidation.
    public var fireDate: LoopInstant? {
        lock.withLock { state.valid ? state.fireDate : nil }
    }

    /// How late the loop may fire it to coalesce wake-ups. Never negative.
    public var tolerance: Duration {
        get { lock.withLock { state.tolerance } }
        set {
            let loop = lock.withLock { () -> Loop? in
                state.tolerance = max(newValue, .zero)
                return state.loop
            }
            loop?.wakeUp()
        }
    }

    /// False once invalidated (or fired, for a one-shot timer).
    public var isValid: Bool { lock.withLock { state.valid } }

    /// Moves the next fire to `date` (the grid of a repeating timer restarts there).
    public func setFireDate(_ date: LoopInstant) {
        let loop = lock.withLock { () -> Loop? in
            guard state.valid else { return nil }
            state.fireDate = date
            state.pendingDelay = nil
            return state.loop
        }
        loop?.timerRescheduled(self)
    }

    /// Stops the timer for good and removes it from its loop (R15).
    public func invalidate() {
        let loop = lock.withLock { () -> Loop? in
            guard state.valid else { return nil }
            state.valid = false
            state.generation &+= 1
            return state.loop
        }
        loop?.detach(self)
    }

    // MARK: loop side

    /// Binds the timer to `loop` (resolving a relative delay against `now`).
    /// Returns false if it is already bound to another loop.
    func bind(to loop: Loop, now: LoopInstant) -> Bool {
        lock.withLock {
            if let bound = state.loop { return bound === loop }
            state.loop = loop
            if let delay = state.pendingDelay {
                state.fireDate = now.advanced(by: delay)
                state.pendingDelay = nil
            }
            return true
        }
    }

    /// The entry to push into a mode's heap, or nil if invalid.
    func heapEntry() -> TimerHeap.Entry? {
        lock.withLock {
            guard state.valid, let date = state.fireDate else { return nil }
            return TimerHeap.Entry(deadline: date, sequence: sequence, generation: state.generation, timer: self)
        }
    }

    /// Whether a heap entry still describes this timer's schedule.
    func isCurrent(_ entry: TimerHeap.Entry) -> Bool {
        // Field by field: a call on `state` copies it, and with it the
        // weak reference to the loop (an atomic count each way).
        lock.withLock { state.valid && state.generation == entry.generation }
    }

    /// Marks the timer firing for `entry`, if the entry still describes its
    /// schedule and its handler is not running already (a run nested in
    /// that handler, in another of the timer's modes, passes it over; the
    /// outer firing reschedules it in every mode). `advanceAfterFiring`
    /// ends the firing.
    func beginFiring(_ entry: TimerHeap.Entry) -> Bool {
        lock.withLock {
            guard state.describes(entry), !state.firing else { return false }
            state.firing = true
            return true
        }
    }

    /// The timer's fire date and tolerance, if valid.
    func window() -> (LoopInstant, Duration)? {
        lock.withLock { state.valid ? state.fireDate.map { ($0, state.tolerance) } : nil }
    }

    /// After the handler ran: a repeating timer moves to the first grid point
    /// after `now()` (R13); a one-shot one is spent (R15), and one the handler
    /// rescheduled keeps its new date: neither reads the clock. Returns
    /// whether it stays scheduled.
    func advanceAfterFiring(firedDate: LoopInstant, now: () -> LoopInstant) -> Bool {
        lock.withLock {
            state.firing = false
            guard state.valid else { return false }
            // A handler may have moved the fire date itself: keep its choice.
            guard state.fireDate == firedDate else { return true }
            guard let step else {
                state.valid = false
                state.generation &+= 1
                return false
            }
            var next = firedDate.nanoseconds
            let now = now().nanoseconds
            if now >= next {
                let missed = (now - next) / step + 1
                let (n, overflow) = next.addingReportingOverflow(missed &* step)
                next = overflow ? UInt64.max : n
            }
            state.fireDate = LoopInstant(nanoseconds: next)
            state.generation &+= 1
            return true
        }
    }

    /// Bumps the generation after an external reschedule; returns the new entry.
    func bumpGeneration() {
        lock.withLock { state.generation &+= 1 }
    }
}
