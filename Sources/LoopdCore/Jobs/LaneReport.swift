import LoopPlatform
import LoopRuntime
import Synchronization

/// What a worker's lane tells the main loop: the one message type between
/// the two sides of the job pipeline.
enum LaneReport {
    /// A job started and is still running at the end of the lane's pass
    /// (a job that ends in the pass it started is reported by its end alone).
    case started(Job)
    /// Jobs that ended, in the order they ended, with how; the lane writes
    /// the waited ones' replies itself when `repliesWrittenByLane` (the main
    /// loop slept), else leaves them to the main loop.
    case ended([JobEnd], repliesWrittenByLane: Bool)
    /// Sinks the main loop must flush with its batch: the lane encoded
    /// replies there and left them to it, or its own write there left bytes
    /// unsent, failed, or settled a draining connection (which then closes).
    case flush([ReplySink])
}

/// One job's end as its lane saw it: how its action completed, and what
/// its processes used when the action knows.
struct JobEnd {
    let job: Job
    let outcome: ActionOutcome
    let usage: JobUsage?
}

/// The lanes' reports on their way to the main loop, oldest first. Lanes
/// post; the main loop takes them all, in a block that the first post after
/// an empty take queues on it, and before it reads any request.
///
/// That second take is the pipeline's ordering rule: a lane posts a job's
/// end before it writes the job's reply, so a request a client sends after
/// reading that reply finds the end recorded, even when it is read before
/// the block runs (`JobScheduler.recordReports()`).
final class LaneMailbox: Sendable {
    private let reports = Locked<[LaneReport]>([])
    /// Whether `reports` may hold something: lets the main thread skip the
    /// lock on every connection read while nothing was posted.
    private let nonEmpty = Atomic<Bool>(false)
    private let mainLoop: Loop
    private let take: @Sendable () -> Void

    /// `take` runs on `mainLoop` after posts, and takes the reports.
    init(mainLoop: Loop, take: @escaping @Sendable () -> Void) {
        self.mainLoop = mainLoop
        self.take = take
    }

    /// Posts a report. Any thread.
    func post(_ report: LaneReport) {
        let first = reports.withLock { r in
            r.append(report)
            nonEmpty.store(true, ordering: .releasing)
            return r.count == 1
        }
        // While the list is non-empty a take is queued already.
        if first { mainLoop.perform(inModes: [.common], take) }
    }

    /// Everything posted so far, oldest first, or nil if nothing was. Main thread.
    func takeAll() -> [LaneReport]? {
        guard nonEmpty.load(ordering: .acquiring) else { return nil }
        return reports.withLock { r in
            nonEmpty.store(false, ordering: .relaxed)
            defer { r.removeAll(keepingCapacity: true) }
            return r
        }
    }
}
