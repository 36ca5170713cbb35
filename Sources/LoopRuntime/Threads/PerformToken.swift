import Synchronization

/// A delayed perform request, for `cancelPerform(_:)`.
public final class PerformToken: Sendable {
    private let claimed = Atomic<Bool>(false)
    // Set once, right after init, before the token is shared. Weak: the
    // timer's handler holds the token, and the loop holds the timer while it
    // is scheduled; a strong reference here would keep every spent request
    // (timer, block and all it captures) alive for good.
    nonisolated(unsafe) fileprivate(set) weak var timer: LoopTimer?

    fileprivate init() {}

    /// Whether the request has run or was cancelled.
    public var isDone: Bool { claimed.load(ordering: .acquiring) }

    /// Cancels the request: true if it had not started (it never will).
    @discardableResult
    public func cancel() -> Bool {
        guard claim() else { return false }
        timer?.invalidate()
        return true
    }

    fileprivate func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}

extension Loop {
    /// Runs `block` once on this loop, `delay` from now, in `modes` (nil: the
    /// common modes): a one-shot timer, like `performSelector:afterDelay:` (R25).
    @discardableResult
    public func perform(afterDelay delay: Duration, modes: [Mode]? = nil,
                        _ block: @escaping @Sendable () -> Void) -> PerformToken {
        let token = PerformToken()
        let timer = LoopTimer(after: delay) { [token] _ in
            if token.claim() { block() }
        }
        token.timer = timer
        for mode in modes ?? [.common] { add(timer, forMode: mode) }
        return token
    }
}
