import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A CLOCK_MONOTONIC timer descriptor armed at absolute instants. The loop
/// keeps one and arms it at its next wake-up, so sleeping needs no polling
/// and has nanosecond resolution (epoll_wait's own timeout has milliseconds).
public final class TimerFD: @unchecked Sendable {
    public let fd: Int32
    // Loop thread only.
    private var armedAt: UInt64 = 0

    public init() throws(PlatformError) {
        fd = try retryingInterrupts("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        }
    }

    deinit { Descriptor.closeOwned(fd) }

    /// Arms at `instant` (monotonic nanoseconds), or disarms for `nil`.
    /// Re-arming at the same instant costs no call.
    public func arm(at instant: UInt64?) {
        let target = instant.map { max($0, 1) } ?? 0
        if target == armedAt { return }
        armedAt = target
        var spec = itimerspec()
        spec.it_value.tv_sec = Int(target / 1_000_000_000)
        spec.it_value.tv_nsec = Int(target % 1_000_000_000)
        let r = timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &spec, nil)
        precondition(r == 0, "timerfd_settime failed with errno \(errno)")
    }

    /// Arms at `instant` and then every `interval` nanoseconds after it,
    /// until re-armed: the kernel's own periodic timer.
    public func arm(at instant: UInt64, repeatingEvery interval: UInt64) {
        armedAt = 0
        var spec = itimerspec()
        spec.it_value.tv_sec = Int(instant / 1_000_000_000)
        spec.it_value.tv_nsec = Int(instant % 1_000_000_000)
        spec.it_interval.tv_sec = Int(interval / 1_000_000_000)
        spec.it_interval.tv_nsec = Int(interval % 1_000_000_000)
        let r = timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &spec, nil)
        precondition(r == 0, "timerfd_settime failed with errno \(errno)")
    }

    /// Consumes an expiry so the level-triggered descriptor stops reporting.
    public func drain() {
        var count: UInt64 = 0
        _ = read(fd, &count, 8)
        armedAt = 0
    }
}
