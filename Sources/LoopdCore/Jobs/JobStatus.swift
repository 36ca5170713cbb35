import LoopPlatform
import LoopdProtocol

/// The fields of `status` and of each `jobs` entry.
enum JobStatus {
    /// A job the daemon knows: what `status` answers (`jobs` leaves out the result).
    static func fields(_ job: Job, includeResult: Bool) -> [(String, JSON)] {
        var f: [(String, JSON)] = [
            ("job", .string(job.id)), ("state", .string(job.visibleState().rawValue)),
            ("worker", .string(job.worker.name)), ("action", .string(job.actionName)),
            ("durable", .bool(job.durable)), ("priority", .integer(Int64(job.priority))),
        ]
        if job.runPriority != job.priority { f.append(("run_priority", .integer(Int64(job.runPriority)))) }
        if let ms = job.expiresInMs {
            f.append(("expires_at", .string(Timestamp.format(unixMilliseconds: job.submittedAtUnixMs &+ ms))))
        }
        // Timestamps the lane wrote are read only once its report made them visible here.
        let started = job.state == .running || job.state.isEnded ? job.startedAtUnixMs : 0
        let ended = job.state.isEnded ? job.endedAtUnixMs : 0
        times(submitted: job.submittedAtUnixMs, started: started == 0 ? nil : started,
              ended: ended == 0 ? nil : ended, into: &f)
        if includeResult {
            f.append(("args", .array(job.args.map { .string($0) })))
            f.append(("submitted_by", .integer(Int64(job.clientUID))))
            if let result = job.result { f.append(("result", result)) }
        }
        if let usage = job.usage { f.append(("usage", usage.json)) }
        if let e = job.error { f.append(("error", e.json)) }
        if case .ended(.cancelled) = job.state, let uid = job.cancelRequestedBy { f.append(("cancelled_by", .integer(Int64(uid)))) }
        retryFields(attempt: job.attempt, retries: job.retries, uniqueKey: job.uniqueKey,
                    errors: job.retry.errors, includeAttempts: includeResult, into: &f)
        links(retryOf: job.retryOf, retriedAs: job.retriedAs, into: &f)
        return f
    }

    /// A durable job known only from the journal (it ended before a restart).
    static func fields(_ finished: FinishedJob) -> [(String, JSON)] {
        var f: [(String, JSON)] = [("job", .string(finished.id)), ("state", .string(finished.state))]
        if let d = finished.details {
            if !d.worker.isEmpty { f.append(("worker", .string(d.worker))) }
            f.append(("action", .string(d.action)))
        }
        f.append(("durable", .bool(true)))
        if let d = finished.details {
            times(submitted: d.submittedAt, started: d.startedAt, ended: finished.finishedAt, into: &f)
        } else {
            f.append(("finished_at", .string(Timestamp.format(unixMilliseconds: finished.finishedAt))))
        }
        if let result = try? JSONParser.parse(Array(finished.resultJSON.utf8)) { f.append(("result", result)) }
        if let code = finished.details?.errorCode {
            f.append(("error", .object([("code", .string(code)), ("message", .string(finished.details?.errorMessage ?? ""))])))
        }
        if let d = finished.details {
            retryFields(attempt: d.attempt, retries: 0, uniqueKey: d.uniqueKey, errors: d.attemptErrors,
                        includeAttempts: true, into: &f)
            links(retryOf: d.links?.retryOf, retriedAs: d.links?.retriedAs, into: &f)
        }
        return f
    }

    /// `retry_of` and `retried_as`, where a `retry` linked the job.
    private static func links(retryOf: String?, retriedAs: String?, into f: inout [(String, JSON)]) {
        if let retryOf { f.append(("retry_of", .string(retryOf))) }
        if let retriedAs { f.append(("retried_as", .string(retriedAs))) }
    }

    /// `submitted_at`, `started_at`, `finished_at` (RFC 3339 UTC), then
    /// `queue_ms` once started and `run_ms` once ended after a start.
    private static func times(submitted: Int64, started: Int64?, ended: Int64?, into f: inout [(String, JSON)]) {
        f.append(("submitted_at", .string(Timestamp.format(unixMilliseconds: submitted))))
        if let started { f.append(("started_at", .string(Timestamp.format(unixMilliseconds: started)))) }
        if let ended { f.append(("finished_at", .string(Timestamp.format(unixMilliseconds: ended)))) }
        if let started { f.append(("queue_ms", .integer(max(0, started - submitted)))) }
        if let started, let ended { f.append(("run_ms", .integer(max(0, ended - started)))) }
    }
}
