import LoopPlatform

/// The kernel's backend: one epoll set, a CLOCK_MONOTONIC timerfd armed at
/// the next wake-up (nanosecond deadlines; epoll_wait's own timeout has
/// milliseconds), and an eventfd other threads write to wake the loop.
final class KernelBackend: LoopBackend, @unchecked Sendable {
    // Immutable after init. epoll_ctl and an eventfd write are safe from any
    // thread in the kernel; the timerfd and the epoll buffer are used by the
    // loop's thread only (`poll` and `wait`).
    private let epoll: Epoll
    private let wakeFD: EventFD
    private let timerFD: TimerFD

    init() throws(PlatformError) {
        epoll = try Epoll()
        wakeFD = try EventFD()
        timerFD = try TimerFD()
        // Edge-triggered: every write is one event, and the counter is never
        // read back, which saves a read(2) per wake-up. Wakers write at most
        // once per sleep, so the 64-bit counter cannot saturate (a saturated
        // counter would stop producing edges).
        try epoll.add(wakeFD.fd, interest: .readable, token: Loop.wakeToken, edgeTriggered: true)
        try epoll.add(timerFD.fd, interest: .readable, token: Loop.timerToken)
    }

    func watch(_ fd: Int32, interest: IOInterest, token: UInt64) throws(PlatformError) {
        try epoll.add(fd, interest: interest, token: token)
    }

    func rewatch(_ fd: Int32, interest: IOInterest, token: UInt64) throws(PlatformError) {
        try epoll.modify(fd, interest: interest, token: token)
    }

    func unwatch(_ fd: Int32) {
        epoll.remove(fd)
    }

    func poll(into events: inout [ReadinessEvent]) {
        collect(into: &events, timeoutMilliseconds: 0)
    }

    func wait(until deadline: LoopInstant?, on clock: LoopClock, into events: inout [ReadinessEvent]) {
        if case .system = clock { timerFD.arm(at: deadline?.nanoseconds) }
        collect(into: &events, timeoutMilliseconds: -1)
    }

    @inline(__always)
    func wake() {
        wakeFD.signal()
    }

    private func collect(into events: inout [ReadinessEvent], timeoutMilliseconds: Int32) {
        var expired = false
        do {
            try epoll.wait(timeoutMilliseconds: timeoutMilliseconds) { e in
                if e.token == Loop.timerToken { expired = true }
                events.append(e)
            }
        } catch {
            fatalError("epoll_wait failed on a loop's own descriptor: \(error)")
        }
        // The timerfd is level-triggered: an expiry is read once, so it stops
        // being reported.
        if expired { timerFD.drain() }
    }
}
