import LoopPlatform
import LoopdProtocol

/// A job that has ended, as the replies about it read it, whichever store
/// holds it: the job table (an end it retains), the journal (an end from
/// before a restart) or the fleet's database. `status`, `wait`, `cancel`
/// and a duplicate submit encode an ended job from this view only, so the
/// same end reads the same wherever it is kept. Fields a store does not
/// keep are nil and left out of the replies.
struct EndedJobView {
    var id: String
    /// `completed`, `failed`, `timed_out`, `cancelled` or `expired`.
    var state: String
    /// The worker that ran it (or was to).
    var worker: String?
    var action: String
    var durable: Bool
    var priority: UInt32?
    var runPriority: UInt32?
    var expiresAt: Int64?
    /// Unix milliseconds; nil in journal records older than loopd kept them.
    var submittedAt: Int64?
    var startedAt: Int64?
    var finishedAt: Int64
    var args: [String]?
    var submittedBy: UInt32?
    var result: JSON?
    var usage: JobUsage?
    var error: ProtocolError?
    var cancelledBy: UInt32?
    /// The attempt it ended on; nil in journal records older than loopd kept it.
    var attempt: Int?
    var retries = 0
    var uniqueKey: String?
    var attemptErrors: [AttemptRecord] = []
    var retryOf: String?
    var retriedAs: String?
    /// Where a fleet job ran (`fleet`, `node`), after `worker` in a reply.
    var placement: [(String, JSON)] = []

    /// An ended job the table holds.
    init(_ job: Job) {
        id = job.id
        state = job.visibleState().rawValue
        worker = job.worker.name
        action = job.actionName
        durable = job.durable
        priority = job.priority
        runPriority = job.runPriority
        expiresAt = job.expiresInMs.map { job.submittedAtUnixMs &+ $0 }
        submittedAt = job.submittedAtUnixMs
        startedAt = job.startedAtUnixMs == 0 ? nil : job.startedAtUnixMs
        finishedAt = job.endedAtUnixMs
        args = job.args
        submittedBy = job.clientUID
        result = job.result
        usage = job.usage
        error = job.error
        if case .ended(.cancelled) = job.state { cancelledBy = job.cancelRequestedBy }
        attempt = job.attempt
        retries = job.retries
        uniqueKey = job.uniqueKey
        attemptErrors = job.retry.errors
        retryOf = job.retryOf
        retriedAs = job.retriedAs
    }

    /// A durable job's end as the journal keeps it.
    init(_ finished: FinishedJob) {
        id = finished.id
        state = finished.state
        durable = true
        finishedAt = finished.finishedAt
        result = try? JSONParser.parse(Array(finished.resultJSON.utf8))
        guard let d = finished.details else {
            action = ""
            return
        }
        worker = d.worker.isEmpty ? nil : d.worker
        action = d.action
        submittedAt = d.submittedAt
        startedAt = d.startedAt
        if let code = d.errorCode {
            error = ProtocolError(ErrorCode(rawValue: code) ?? .jobFailed, d.errorMessage ?? "")
        }
        attempt = d.attempt
        uniqueKey = d.uniqueKey
        attemptErrors = d.attemptErrors
        retryOf = d.links?.retryOf
        retriedAs = d.links?.retriedAs
    }

    /// `status`'s fields (`jobs` leaves out the arguments, the result and the attempts).
    func statusFields(includeResult: Bool) -> [(String, JSON)] {
        var f: [(String, JSON)] = [("job", .string(id)), ("state", .string(state))]
        if let worker { f.append(("worker", .string(worker))) }
        if !action.isEmpty { f.append(("action", .string(action))) }
        f.append(("durable", .bool(durable)))
        if let priority {
            f.append(("priority", .integer(Int64(priority))))
            if let runPriority, runPriority != priority { f.append(("run_priority", .integer(Int64(runPriority)))) }
        }
        if let expiresAt { f.append(("expires_at", .string(Timestamp.format(unixMilliseconds: expiresAt)))) }
        if let submittedAt {
            JobStatus.times(submitted: submittedAt, started: startedAt, ended: finishedAt, into: &f)
        } else {
            f.append(("finished_at", .string(Timestamp.format(unixMilliseconds: finishedAt))))
        }
        if includeResult {
            if let args { f.append(("args", .array(args.map { .string($0) }))) }
            if let submittedBy { f.append(("submitted_by", .integer(Int64(submittedBy)))) }
            if let result { f.append(("result", result)) }
        }
        if let usage { f.append(("usage", usage.json)) }
        if let error { f.append(("error", error.json)) }
        if let cancelledBy { f.append(("cancelled_by", .integer(Int64(cancelledBy)))) }
        if let attempt {
            JobStatus.retryFields(attempt: attempt, retries: retries, uniqueKey: uniqueKey, errors: attemptErrors,
                                  includeAttempts: includeResult, into: &f)
        }
        if let retryOf { f.append(("retry_of", .string(retryOf))) }
        if let retriedAs { f.append(("retried_as", .string(retriedAs))) }
        return f
    }

    /// The reply to a request that waited for the end (a `wait`, a waited
    /// submit, or its duplicate): `ok` with the result, or the job's error,
    /// with the same fields beside it.
    func writeReply(requestID: RequestID?, duplicate: Bool = false, into out: inout [UInt8]) {
        var f: [(String, JSON)] = [("job", .string(id)), ("state", .string(state))]
        if let worker { f.append(("worker", .string(worker))) }
        f += placement
        if let result { f.append(("result", result)) }
        if let usage { f.append(("usage", usage.json)) }
        if let attempt, retries > 0 || attempt > 1 || !attemptErrors.isEmpty { f.append(("attempt", .integer(Int64(attempt)))) }
        if duplicate { f.append(("duplicate", true)) }
        guard state != JobState.completed.rawValue else { return Response.ok(id: requestID, f, into: &out) }
        Response.error(id: requestID, error ?? ProtocolError(.jobFailed, "job \(id) ended \(state)"), f, into: &out)
    }

    /// The reply to a `cancel` that came too late: nothing was cancelled.
    var cancelTooLateFields: [(String, JSON)] {
        [("job", .string(id)), ("cancelled", false), ("state", .string(state)), ("started", .bool(startedAt != nil))]
    }
}
