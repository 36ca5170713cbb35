import LoopPlatform
import Synchronization

/// Where a loop reads the time. `.system` is CLOCK_MONOTONIC and sleeps on a
/// timerfd; `.manual` lets tests move time by hand, deterministically.
public enum LoopClock: Sendable {
    /// CLOCK_MONOTONIC.
    case system
    /// A clock that moves only when the test advances it.
    case manual(ManualClock)

    /// The current instant.
    public func now() -> LoopInstant {
        switch self {
        case .system: LoopInstant(nanoseconds: monotonicNanoseconds())
        case .manual(let clock): clock.now()
        }
    }
}

/// A clock for tests: time stands still until `advance(by:)`, which wakes
/// every loop reading it so their timers are looked at again.
public final class ManualClock: Sendable {
    private struct State {
        var now: LoopInstant
        var listeners: [ObjectIdentifier: @Sendable () -> Void] = [:]
    }
    // Guarded by the mutex; any thread.
    private let state: Mutex<State>

    /// A clock starting at `start` (1 s by default, so `start - small` is valid).
    public init(start: LoopInstant = LoopInstant(nanoseconds: 1_000_000_000)) {
        state = Mutex(State(now: start))
    }

    /// The current instant.
    public func now() -> LoopInstant { state.withLock { $0.now } }

    /// Moves time forward and wakes the loops on this clock.
    public func advance(by d: Duration) {
        let listeners = state.withLock { s in
            s.now = s.now.advanced(by: d)
            return Array(s.listeners.values)
        }
        for wake in listeners { wake() }
    }

    /// Moves time to `instant` if it is later than now.
    public func advance(to instant: LoopInstant) {
        let now = self.now()
        if instant > now { advance(by: instant.duration(since: now)) }
    }

    func addListener(_ id: ObjectIdentifier, _ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.listeners[id] = wake }
    }

    func removeListener(_ id: ObjectIdentifier) {
        _ = state.withLock { $0.listeners.removeValue(forKey: id) }
    }
}
