import LoopPlatform
import LoopRuntime

/// Gives the allocator's free memory back to the kernel once the daemon
/// goes idle after a burst: when no job is waiting or running and none has
/// ended for `quietPeriod`, after at least `burstJobs` ended since the last
/// trim. Without it the resident size stays at the burst's peak: the freed
/// jobs, requests and replies sit in malloc's free lists.
///
/// Cheap while work flows: a job's end costs a counter and a comparison;
/// at most one one-shot timer on the main loop exists, armed when the
/// queues drain, and never rescheduled per job: when it fires it checks
/// whether anything ended meanwhile and, if so, waits one more period.
/// Main thread only.
final class IdleTrim: @unchecked Sendable {
    static let quietPeriod: Duration = .seconds(1)
    static let burstJobs = 1_000

    private let loop: Loop
    private let log: DaemonLogger
    /// Jobs ended since the last trim.
    private var endedSinceTrim = 0
    /// `endedSinceTrim` when the timer was last armed or re-armed.
    private var endedAtArm = 0
    private var timer: LoopTimer?
    /// Whether jobs are waiting or running (the scheduler answers).
    private let isBusy: () -> Bool
    /// Trims done since start (`stats`' `idle_trims`).
    private(set) var trims = 0

    init(loop: Loop, log: DaemonLogger, isBusy: @escaping () -> Bool) {
        self.loop = loop
        self.log = log
        self.isBusy = isBusy
    }

    /// A job ended; `idle` says no job is waiting or running now.
    func jobEnded(idle: Bool) {
        endedSinceTrim += 1
        guard idle, timer == nil, endedSinceTrim >= Self.burstJobs else { return }
        arm()
    }

    private func arm() {
        endedAtArm = endedSinceTrim
        let t = LoopTimer(after: Self.quietPeriod) { [unowned self] _ in fire() }
        timer = t
        loop.add(t, forMode: .common)
    }

    private func fire() {
        timer = nil
        // Busy again: the next drain arms it anew.
        guard !isBusy() else { return }
        // Jobs came and went meanwhile: not quiet yet.
        guard endedSinceTrim == endedAtArm else {
            arm()
            return
        }
        let ended = endedSinceTrim
        endedSinceTrim = 0
        trims += 1
        let released = Memory.trim()
        log(.debug, "idle after \(ended) jobs: free memory \(released ? "returned to" : "already with") the kernel")
    }

    /// Stops the timer (shutdown).
    func stop() {
        timer?.invalidate()
        timer = nil
    }
}
