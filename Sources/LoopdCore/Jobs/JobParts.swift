import LoopRuntime
import LoopdProtocol

/// What every job of one action on one worker shares: the action, the
/// worker's queue and their metrics. Made once per pair by the queue
/// (`WorkerQueue.kind`), and made again after a reload replaces the actions.
/// Immutable.
final class JobKind: Sendable {
    let action: any JobAction
    let actionName: String
    /// Not retained: the queue keeps its kinds, and lives as long as the
    /// scheduler, so as long as any job.
    unowned(unsafe) let queue: WorkerQueue
    let metrics: JobMetrics
    /// Its jobs' set in the `jobs` index (`JobIndex`): a slot of its own,
    /// so filing a job hashes no worker or action name.
    let indexSlot: Int

    init(action: any JobAction, named actionName: String, queue: WorkerQueue, metrics: JobMetrics, indexSlot: Int) {
        self.action = action
        self.actionName = actionName
        self.queue = queue
        self.metrics = metrics
        self.indexSlot = indexSlot
    }
}

/// Who submitted jobs: one per connection (`Requester.submitter`), or per
/// owner among replayed jobs. Immutable.
final class JobSubmitter: Sendable {
    let owner: JobOwner
    /// Set for the local job that runs an attempt of a fleet job this node
    /// claimed: its end is the fleet's to record (`JobScheduler.fleetEnded`).
    let fleetRun: FleetRun?

    init(_ owner: JobOwner, fleetRun: FleetRun? = nil) {
        self.owner = owner
        self.fleetRun = fleetRun
    }
}

/// A waited submit: who sent it and where its reply goes (immutable, any
/// thread), and, as its job's `JobRecord`, what it ended with (main thread
/// only): a waited job's record is made with it, one allocation for both.
final class WaitingSubmit: JobRecord, @unchecked Sendable {
    let submitter: JobSubmitter
    let address: ReplyAddress

    init(submitter: JobSubmitter, address: ReplyAddress) {
        self.submitter = submitter
        self.address = address
    }
}

/// Where a job came from, in one reference: a job nobody waits for names
/// only its submitter.
enum JobOrigin: Sendable {
    case submitted(JobSubmitter)
    case waiting(WaitingSubmit)

    var submitter: JobSubmitter {
        switch self {
        case .submitted(let s): s
        case .waiting(let w): w.submitter
        }
    }
}

/// The fields of a submit that most jobs leave at their defaults: nil in
/// `Job.extras` when all of them are. Immutable.
final class SubmitExtras: Sendable {
    let placement: Placement
    let mode: String?
    /// `Job.loopModes(mode)`, worked out once.
    let modes: [Loop.Mode]?
    let expiresInMs: Int64?
    let retries: Int
    let retryBackoffMs: Int64
    let uniqueKey: String?

    /// The extras of `s`; nil when it sets none of them. (A factory, not a
    /// failable init: a class's init allocates before it can fail.)
    static func of(_ s: SubmitRequest) -> SubmitExtras? {
        if s.placement == .any && s.mode == nil && s.expiresInMs == nil && s.retries == 0
            && s.retryBackoffMs == RequestLimits.defaultRetryBackoffMs && s.uniqueKey == nil {
            return nil
        }
        return SubmitExtras(s)
    }

    private init(_ s: SubmitRequest) {
        placement = s.placement
        mode = s.mode
        modes = Job.loopModes(s.mode)
        expiresInMs = s.expiresInMs
        retries = s.retries
        retryBackoffMs = s.retryBackoffMs
        uniqueKey = s.uniqueKey
    }
}

/// What only some jobs come to have: how it ended, who cancelled it, its
/// failed attempts. Main thread only. A waited job's is its `WaitingSubmit`.
class JobRecord {
    final var result: JSON?
    final var usage: JobUsage?
    final var error: ProtocolError?
    final var cancelRequestedBy: UInt32?
    final var retry = RetryState()
    /// The jobs a `retry` linked it to; nil for almost every job.
    final var links: RetryLinks?
}

/// The ended job a job re-runs (`retry_of`) and the job that re-runs it
/// (`retried_as`). Main thread only.
final class RetryLinks {
    var retryOf: String?
    var retriedAs: String?
}
