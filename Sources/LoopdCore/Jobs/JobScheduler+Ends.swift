import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// The replies and records of an end (the end itself is the core's:
/// `JobScheduler.end`). Main thread only.
extension JobScheduler {
    /// `cancel`'s reply: whether the job was cancelled, its state, and
    /// whether it had started (a job stopped while it ran may have done
    /// some or all of its work). Main thread, once the job's end (if any)
    /// is recorded.
    static func writeCancelReply(_ job: Job, cancelled: Bool, requestID: RequestID?, into out: inout [UInt8]) {
        Response.beginOK(id: requestID, into: &out)
        Response.field("job", job.id, into: &out)
        Response.field("cancelled", .bool(cancelled), into: &out)
        let state = job.visibleState()
        Response.field("state", state.rawValue, into: &out)
        Response.field("started", .bool(job.state.isEnded ? job.startedAtUnixMs != 0 : state == .running), into: &out)
        Response.end(into: &out)
    }
}

extension FinishedJob {
    /// The journal's record of a durable job's end.
    init(_ job: Job, end: Job.End) {
        self.init(id: job.id, state: end.protocolState.rawValue, resultJSON: (job.result ?? .object([])).serialized(),
                  finishedAt: job.endedAtUnixMs, clientUID: job.clientUID,
                  details: FinishedJob.Details(submittedAt: job.submittedAtUnixMs,
                                               startedAt: job.startedAtUnixMs == 0 ? nil : job.startedAtUnixMs,
                                               worker: job.worker.name, action: job.actionName,
                                               errorCode: job.error?.code.rawValue, errorMessage: job.error?.message,
                                               attempt: job.attempt, attemptErrors: job.retry.errors,
                                               uniqueKey: job.uniqueKey,
                                               links: .make(request: end.isFailure ? DurableJob(job) : nil,
                                                            retryOf: job.retryOf, retriedAs: job.retriedAs)))
    }
}
