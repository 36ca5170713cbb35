import LoopPlatform
import LoopdProtocol

/// The fields of `status` and of each `jobs` entry.
enum JobStatus {
    /// A job the daemon knows: what `status` answers (`jobs` leaves out the
    /// result). An ended job's are its `EndedJobView`'s.
    static func fields(_ job: Job, includeResult: Bool) -> [(String, JSON)] {
        if job.state.isEnded { return EndedJobView(job).statusFields(includeResult: includeResult) }
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
        let started = job.state == .running ? job.startedAtUnixMs : 0
        times(submitted: job.submittedAtUnixMs, started: started == 0 ? nil : started, ended: nil, into: &f)
        if includeResult {
            f.append(("args", .array(job.args.map { .string($0) })))
            f.append(("submitted_by", .integer(Int64(job.clientUID))))
            if let result = job.result { f.append(("result", result)) }
        }
        if let usage = job.usage { f.append(("usage", usage.json)) }
        if let e = job.error { f.append(("error", e.json)) }
        retryFields(attempt: job.attempt, retries: job.retries, uniqueKey: job.uniqueKey,
                    errors: job.retry.errors, includeAttempts: includeResult, into: &f)
        links(retryOf: job.retryOf, retriedAs: job.retriedAs, into: &f)
        return f
    }

    /// `retry_of` and `retried_as`, where a `retry` linked the job.
    private static func links(retryOf: String?, retriedAs: String?, into f: inout [(String, JSON)]) {
        if let retryOf { f.append(("retry_of", .string(retryOf))) }
        if let retriedAs { f.append(("retried_as", .string(retriedAs))) }
    }

    /// `submitted_at`, `started_at`, `finished_at` (RFC 3339 UTC), then
    /// `queue_ms` once started and `run_ms` once ended after a start.
    static func times(submitted: Int64, started: Int64?, ended: Int64?, into f: inout [(String, JSON)]) {
        f.append(("submitted_at", .string(Timestamp.format(unixMilliseconds: submitted))))
        if let started { f.append(("started_at", .string(Timestamp.format(unixMilliseconds: started)))) }
        if let ended { f.append(("finished_at", .string(Timestamp.format(unixMilliseconds: ended)))) }
        if let started { f.append(("queue_ms", .integer(max(0, started - submitted)))) }
        if let started, let ended { f.append(("run_ms", .integer(max(0, ended - started)))) }
    }
}
