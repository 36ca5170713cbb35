import LoopPlatform

extension Loop {
    /// What another thread can tell about a loop's liveness: the daemon's
    /// watchdog gate and `inspect` read it. Times are CLOCK_MONOTONIC
    /// nanoseconds at a few milliseconds' resolution, whatever the loop's clock.
    public struct Health: Sendable, Equatable {
        /// The loop sleeps in the kernel: idle, not stalled.
        public var isWaiting: Bool
        /// When the callout in progress (a handler, block or observer) began;
        /// nil between callouts.
        public var calloutStartedAt: LoopInstant?
        /// When the loop last began a pass.
        public var lastTurn: LoopInstant
    }

    /// A snapshot of the loop's liveness. Any thread.
    public var health: Health {
        let start = calloutStart.load(ordering: .relaxed)
        return Health(isWaiting: isWaiting,
                      calloutStartedAt: start == 0 ? nil : LoopInstant(nanoseconds: start),
                      lastTurn: LoopInstant(nanoseconds: lastTurnStamp.load(ordering: .relaxed)))
    }

    /// How long the loop's thread has been inside one callout without the
    /// loop turning (a nested run turns it); zero while it waits or between
    /// callouts. Compare with a threshold to detect a stalled worker. Any thread.
    public var stalledDuration: Duration {
        let start = calloutStart.load(ordering: .relaxed)
        guard start != 0 else { return .zero }
        let since = max(start, lastTurnStamp.load(ordering: .relaxed))
        let now = coarseMonotonicNanoseconds()
        return now > since ? .nanoseconds(Int64(now - since)) : .zero
    }
}
