import LoopPlatform

/// What a loop asks of the kernel: watch descriptors, wait for them (until
/// an instant, or not at all), and be woken from another thread.
///
/// The loop decides; the backend only carries out. `KernelBackend` is the
/// real one (epoll, a timerfd and an eventfd); a test can put a kernel of
/// its own making in its place (`LoopRegistry.makeCurrentLoop(backend:)`)
/// and step a loop through its passes with no descriptor and no real time.
///
/// Events carry the loop's tokens: those of its sources and the main queue,
/// plus `Loop.wakeToken` and `Loop.timerToken` for the backend's own wake-up
/// and timer, which the loop reads as "something woke me" and nothing more.
protocol LoopBackend: AnyObject, Sendable {
    /// Watches `fd` for `interest`, reporting its readiness under `token`.
    /// Level-triggered: what is not handled is reported again (R5). Any
    /// thread, under the loop's lock.
    func watch(_ fd: Int32, interest: IOInterest, token: UInt64) throws(PlatformError)
    /// Changes what a watched `fd` is watched for. Any thread, under the loop's lock.
    func rewatch(_ fd: Int32, interest: IOInterest, token: UInt64) throws(PlatformError)
    /// Stops watching `fd`; one already closed is not an error. Any thread,
    /// under the loop's lock.
    func unwatch(_ fd: Int32)
    /// Appends what is ready now, without blocking. Loop thread only.
    func poll(into events: inout [ReadinessEvent])
    /// Blocks until a watched descriptor is ready, `wake()` is called, or
    /// `clock` reaches `deadline` (nil: no deadline), then appends what is
    /// ready. Loop thread only. A manual clock needs no timer: advancing it
    /// wakes the loop.
    func wait(until deadline: LoopInstant?, on clock: LoopClock, into events: inout [ReadinessEvent])
    /// Makes the loop's wait in progress, or its next one, return. Any thread.
    func wake()
}
