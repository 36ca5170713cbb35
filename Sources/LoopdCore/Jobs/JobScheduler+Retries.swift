import LoopPlatform
import LoopdProtocol

/// What the main thread keeps of a job's earlier attempts (the attempt
/// number itself is `Job.attempt`, which the lane reads too).
struct RetryState {
    /// The failed attempts' errors, the last `AttemptRecord.limit`.
    var errors: [AttemptRecord] = []
    /// The backoff before the current attempt; nil for the first, which
    /// waits `delay_ms` instead.
    var delayMs: Int64?

    /// No failed attempt and no backoff: what a job without a record has.
    var isEmpty: Bool { errors.isEmpty && delayMs == nil }
}

/// Exponential backoff with full jitter: before attempt `n + 1` a job
/// waits a random time in `0...min(cap, base · 2^(n-1))` milliseconds.
enum RetryBackoff {
    /// The longest wait after failed attempt `attempt` (from 1): `base ·
    /// 2^(attempt-1)`, saturating, and at most `cap`.
    static func ceiling(afterAttempt attempt: Int, baseMs: Int64, capMs: Int64) -> Int64 {
        guard baseMs > 0, capMs > 0 else { return 0 }
        let shift = max(0, attempt - 1)
        guard shift < 62, baseMs <= capMs >> Int64(shift) else { return capMs }
        return min(capMs, baseMs << Int64(shift))
    }

    /// The wait after failed attempt `attempt`: `jitter(ceiling)`, clamped
    /// into `0...ceiling` whatever the jitter returns.
    static func delay(afterAttempt attempt: Int, baseMs: Int64, capMs: Int64, jitter: (Int64) -> Int64) -> Int64 {
        let ceiling = ceiling(afterAttempt: attempt, baseMs: baseMs, capMs: capMs)
        return ceiling == 0 ? 0 : min(ceiling, max(0, jitter(ceiling)))
    }
}

extension Job {
    /// How long the hand-over to the lane waits: a retry's backoff, else `delay_ms`.
    var handOverDelayMs: Int64 { retry.delayMs ?? delayMs }

    /// Whether an attempt that ended with `outcome` is followed by another:
    /// it failed or timed out (not cancelled) and attempts are left. The
    /// lane (before it reports the end) and the main thread (when it takes
    /// the report) decide alike: the lane does not answer a waiting client,
    /// the main thread queues the job again.
    func willRetry(after outcome: ActionOutcome) -> Bool {
        guard retries > 0, case .failure(let error, _) = outcome else { return false }
        guard error.code == .jobFailed || error.code == .timeout else { return false }
        return attempt <= retries
    }
}

/// Retries: the limits a submit is held to, and what happens when an
/// attempt fails and another follows. Main thread only.
extension JobScheduler {
    /// `retries` and `unique_key` against the configured limits.
    func checkRetryLimits(_ s: SubmitRequest) throws(ProtocolError) {
        if s.retries > config.limits.maxRetries {
            throw ProtocolError(.badRequest, "\"retries\" is \(s.retries); limits.max_retries is \(config.limits.maxRetries)")
        }
        if let key = s.uniqueKey, key.utf8.count > config.limits.maxUniqueKeyBytes {
            throw ProtocolError(.badRequest, "\"unique_key\" is \(key.utf8.count) bytes; limits.max_unique_key_bytes is \(config.limits.maxUniqueKeyBytes)")
        }
    }

    /// A job with `retries` ended on a failed or timed-out attempt: that
    /// attempt's error joins the others, so `attempts` lists every one.
    func recordLastAttempt(_ job: Job, _ error: ProtocolError) {
        guard error.code == .jobFailed || error.code == .timeout else { return }
        AttemptRecord.append(AttemptRecord(attempt: job.attempt, code: error.code.rawValue, message: error.message,
                                           endedAt: job.endedAtUnixMs), to: &job.retry.errors)
    }

    /// Restores a replayed durable job's attempts from its journal record.
    func restoreAttempts(_ job: Job, from d: DurableJob) {
        guard d.attemptsDone > 0 else { return }
        job.attempt = d.attemptsDone + 1
        job.retry.errors = d.attemptErrors
        job.retry.delayMs = timing.backoff(afterAttempt: d.attemptsDone, baseMs: d.retryBackoffMs)
    }
}

extension JobStatus {
    /// `attempt` always; `retries`, `unique_key`, `last_error` when there
    /// are; `attempts` (the failed attempts) with `includeAttempts`.
    static func retryFields(attempt: Int, retries: Int, uniqueKey: String?, errors: [AttemptRecord],
                            includeAttempts: Bool, into f: inout [(String, JSON)]) {
        f.append(("attempt", .integer(Int64(attempt))))
        if retries > 0 { f.append(("retries", .integer(Int64(retries)))) }
        if let uniqueKey { f.append(("unique_key", .string(uniqueKey))) }
        if let last = errors.last {
            f.append(("last_error", .object([("code", .string(last.code)), ("message", .string(last.message))])))
        }
        if includeAttempts && !errors.isEmpty {
            f.append(("attempts", .array(errors.map { r in
                .object([("attempt", .integer(Int64(r.attempt))), ("code", .string(r.code)), ("message", .string(r.message)),
                         ("finished_at", .string(Timestamp.format(unixMilliseconds: r.endedAt)))])
            })))
        }
    }
}
