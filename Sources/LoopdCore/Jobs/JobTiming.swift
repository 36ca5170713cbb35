import LoopPlatform
import LoopRuntime

/// When waiting jobs move on by themselves: a delay (`delay_ms`, or a
/// retry's backoff) that ends, an expiry that passes, and how long a
/// retry's backoff is. Two deadline heaps on the main loop's clock, each
/// with one timer armed at its earliest (`JobDeadlines`); a job that falls
/// due goes back to the lifecycle through `release` or `expire`, which
/// decide what becomes of it. Main thread only.
final class JobTiming: @unchecked Sendable {
    private let loop: Loop
    /// Jobs waiting out a delay or a retry's backoff, by due instant.
    let delays = JobDeadlines(.delay)
    /// Deadlines of the jobs that may expire (docs/PROTOCOL.md, "Expiry").
    let expiries = JobDeadlines(.expiry)
    /// `limits.max_retry_backoff_ms`, the longest backoff.
    var maxBackoffMs: Int64
    /// The backoff's jitter: a number in `0...ceiling`. Tests set one of
    /// their own (a seeded generator, or one that records the ceilings).
    var jitter: (_ ceiling: Int64) -> Int64 = { Int64.random(in: 0...$0) }
    /// Told of a delayed job whose delay has passed.
    private let release: (Job) -> Void
    /// Told of a job whose expiry has passed.
    private let expire: (Job) -> Void

    init(loop: Loop, maxBackoffMs: Int64, release: @escaping (Job) -> Void, expire: @escaping (Job) -> Void) {
        self.loop = loop
        self.maxBackoffMs = maxBackoffMs
        self.release = release
        self.expire = expire
    }

    /// Holds `job` for `ms` milliseconds of the main loop's clock.
    func delay(_ job: Job, byMs ms: Int64) {
        let due = loop.clock.now().nanoseconds &+ UInt64(ms) &* 1_000_000
        if delays.insert(job, deadline: due) { armDelays() }
    }

    /// Watches a new job's expiry, if it has one: `submitted_at +
    /// expires_in_ms` in wall time, so a durable job replayed after a
    /// restart keeps it.
    func watchExpiry(of job: Job) {
        guard let ms = job.expiresInMs else { return }
        let left = job.submittedAtUnixMs &+ ms &- unixMilliseconds()
        let now = loop.clock.now().nanoseconds
        if expiries.insert(job, deadline: left <= 0 ? now : now &+ UInt64(left) * 1_000_000) { armExpiries() }
    }

    /// Whether `job`'s expiry has passed already (a durable job replayed
    /// after its deadline).
    func hasExpired(_ job: Job) -> Bool {
        guard let ms = job.expiresInMs else { return false }
        return job.submittedAtUnixMs &+ ms <= unixMilliseconds()
    }

    /// `job` ended: it leaves both heaps. The timers are left as they are:
    /// if it was the earliest, one fires once for nothing and re-arms
    /// (cheaper than moving it on every end).
    func forget(_ job: Job) {
        if job.delaySlot >= 0 { delays.remove(job) }
        if job.expirySlot >= 0 { expiries.remove(job) }
    }

    /// The wait before the attempt after failed attempt `attempt`, for a
    /// job whose `retry_backoff_ms` is `baseMs`.
    func backoff(afterAttempt attempt: Int, baseMs: Int64) -> Int64 {
        RetryBackoff.delay(afterAttempt: attempt, baseMs: baseMs, capMs: maxBackoffMs, jitter: jitter)
    }

    /// Releases every job whose delay has passed, in order of due instant
    /// (then of submission), and re-arms for the next.
    private func releaseDue() {
        for job in delays.takeDue(now: loop.clock.now().nanoseconds) { release(job) }
        armDelays()
    }

    /// Expires every job whose deadline has come, then re-arms for the next.
    private func expireDue() {
        for job in expiries.takeDue(now: loop.clock.now().nanoseconds) { expire(job) }
        armExpiries()
    }

    private func armDelays() {
        delays.arm(on: loop) { [unowned self] in releaseDue() }
    }

    private func armExpiries() {
        expiries.arm(on: loop) { [unowned self] in expireDue() }
    }
}
