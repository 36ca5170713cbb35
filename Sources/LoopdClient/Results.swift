#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The reply to `ping`.
public struct Pong: Sendable, Equatable {
    /// The daemon's process id.
    public var pid: Int64
    /// The daemon's release (`MAJOR.MINOR.PATCH`).
    public var version: String
}

/// A job as `submit` and `wait` answer it: its id, state, worker and, once
/// it has ended, its result.
public struct JobOutcome: Sendable, Equatable {
    /// The job's id (opaque).
    public var job: String
    /// Its state: `queued`, `delayed` or `held` for a submit that did not
    /// wait; a final state once waited for; any non-final state for a
    /// `wait` whose timeout passed first.
    public var state: JobState
    /// The worker it was placed on (absent only in replies of older daemons).
    public var worker: String?
    /// The action's result once the job has ended (docs/PROTOCOL.md, "Result shapes").
    public var result: JSON?
    /// Which attempt ended it, for a job submitted with `retries` (from 1).
    public var attempt: Int?
    /// True when a submit's `uniqueKey` named a job already known: this is
    /// that job, and no new one was made.
    public var duplicate: Bool = false
    /// What an exec job's processes used, once it has ended.
    public var usage: JobUsage?

    /// The result's `output` (what `echo` returns), if it has one.
    public var output: String? { result?["output"]?.stringValue }
}

/// A job as `status` and `jobs` describe it.
public struct JobStatus: Sendable, Equatable {
    /// The job's id.
    public var job: String
    /// Its state.
    public var state: JobState
    /// The worker it was placed on.
    public var worker: String?
    /// Its action.
    public var action: String?
    /// Whether it is journaled.
    public var durable: Bool
    /// When the daemon accepted it.
    public var submittedAt: Date?
    /// When it started.
    public var startedAt: Date?
    /// When it ended.
    public var finishedAt: Date?
    /// Milliseconds between acceptance and start.
    public var queueMs: Int64?
    /// Milliseconds it ran (ended jobs that started).
    public var runMs: Int64?
    /// Its result once finished (`status` only; `jobs` leaves it out).
    public var result: JSON?
    /// Why it failed, timed out or was cancelled.
    public var error: LoopdError?
    /// The uid whose `cancel` cancelled it.
    public var cancelledBy: Int64?
    /// What an exec job's processes used, once it has ended.
    public var usage: JobUsage?
    /// The attempt that runs, or ran last (from 1).
    public var attempt: Int64 = 1
    /// The `retries` it was submitted with.
    public var retries: Int64 = 0
    /// The failed attempts, oldest first, the last 8 (`status` only).
    public var attempts: [FailedAttempt] = []
    /// The arguments it was submitted with (`status` only; nil for a
    /// durable job known only from the journal).
    public var args: [String]?
    /// The uid that submitted it (`status` only).
    public var submittedBy: Int64?
    /// The ended job this one re-runs, when a `retry` made it.
    public var retryOf: String?
    /// The job that re-runs this one, once a `retry` made it.
    public var retriedAs: String?

    /// One failed attempt of a job with retries.
    public struct FailedAttempt: Sendable, Equatable {
        /// Which attempt (from 1).
        public var attempt: Int64
        /// Its error code, as sent.
        public var code: String
        /// Its error message.
        public var message: String
        /// When it ended.
        public var finishedAt: Date?
    }
}

/// One page of `jobs`.
public struct JobsPage: Sendable, Equatable {
    /// The jobs, oldest submission first.
    public var jobs: [JobStatus]
    /// The cursor of the next page (give it as `JobsQuery.cursor` with the
    /// same filters); nil on the last page.
    public var nextCursor: String?
}

/// The reply to `cancel`.
public struct CancelOutcome: Sendable, Equatable {
    /// The job's id.
    public var job: String
    /// Whether this request cancelled it (false: it had already ended).
    public var cancelled: Bool
    /// `cancelled`, or the final state the job ended in by itself.
    public var state: JobState
    /// Whether the job had started before it was cancelled or ended.
    public var started: Bool
}

/// One worker as `workers` lists it.
public struct WorkerInfo: Sendable, Equatable {
    /// The worker's name.
    public var name: String
    /// The run mode its loop runs in now.
    public var mode: String
    /// `auto` or `explicit`.
    public var placement: String?
    /// Jobs waiting for it (delayed and held ones included).
    public var queued: Int64
    /// Of those, jobs its current mode does not admit.
    public var held: Int64
    /// The id of the job it runs now, when this client may see that job
    /// (its own; any job for an administrator); nil otherwise, also while
    /// it runs another user's job (see `busy`).
    public var running: String?
    /// Whether it runs a job now, whoever's.
    public var busy: Bool
    /// While `busy`: the running job's action, whoever's; nil otherwise.
    public var runningAction: String?
    /// While `busy`: when the running job started, whoever's; nil otherwise.
    public var runningSince: Date?
    /// `waiting`, `busy` or `stalled`.
    public var loop: String
    /// How long the loop has been inside its current callout.
    public var stalledMs: Int64
    /// Jobs it has finished other than by a cancel.
    public var completed: Int64
}

/// One schedule, as `schedules` lists it (`[schedules.NAME]` in loopd.toml).
public struct ScheduleInfo: Sendable, Equatable {
    /// The schedule's name.
    public var name: String
    /// The action its jobs run.
    public var action: String
    /// Its grid, for people: `every 5m`, `cron 0 9 * * 1-5 (local)`.
    public var when: String
    /// `one`, `all` or `none`: what happens to missed slots.
    public var catchUp: String
    /// `skip`, `queue` or `cancel_previous`: a slot while the previous run has not ended.
    public var overlap: String
    /// This host's fixed delay after each slot (from `jitter`), milliseconds.
    public var delayMs: Int64
    /// Whether an administrator paused it.
    public var paused: Bool
    /// When it runs next (its next slot plus the delay); nil while paused.
    public var nextRun: Date?
    /// The last slot it looked at.
    public var lastSlot: Date?
    /// The job it last submitted; shown to administrators only (the job is loopd's own).
    public var lastJob: String?
    /// That job's state, to administrators.
    public var lastState: JobState?
    /// Why its last submit was refused, if it was.
    public var lastError: String?
    /// Jobs it submitted since loopd started.
    public var runs: Int64
    /// Slots it did not run since loopd started (missed, overlapping, refused).
    public var skipped: Int64
}

/// The reply to a bulk `retry`: each old job and its new one, and the
/// jobs whose new submit was refused, with why.
public struct RetryOutcome: Sendable, Equatable {
    /// (old job, new job), in the order they were retried.
    public var retried: [(job: String, newJob: String)]
    /// (old job, the refusal of its re-submit).
    public var refused: [(job: String, error: LoopdError)]
    /// More jobs matched than the limit: ask again.
    public var more: Bool

    /// Equal jobs retried, jobs refused (by id) and `more`.
    public static func == (a: RetryOutcome, b: RetryOutcome) -> Bool {
        a.more == b.more && a.retried.elementsEqual(b.retried, by: ==)
            && a.refused.map(\.job) == b.refused.map(\.job)
    }
}

/// The reply to `pause`, `resume` and `trigger`.
public struct ScheduleChange: Sendable, Equatable {
    /// The schedule.
    public var schedule: String
    /// Whether it is paused now.
    public var paused: Bool
    /// The job a `trigger` submitted.
    public var job: String?
}

/// The reply to `mode`.
public struct ModeChange: Sendable, Equatable {
    /// The worker.
    public var worker: String
    /// The mode it runs in now.
    public var mode: String
    /// The mode it ran in before.
    public var previous: String
}

/// The daemon's counters (`stats`). The common ones are typed; `json` has
/// the whole reply, fields added by later daemons included.
public struct DaemonStats: Sendable, Equatable {
    /// Jobs accepted.
    public var accepted: Int64
    /// Jobs completed.
    public var completed: Int64
    /// Jobs failed.
    public var failed: Int64
    /// Jobs timed out.
    public var timedOut: Int64
    /// Jobs cancelled.
    public var cancelled: Int64
    /// Jobs waiting now.
    public var queued: Int64
    /// Jobs running now.
    public var running: Int64
    /// Open client connections.
    public var connections: Int64
    /// Connections whose requests are not read now (backpressure).
    public var connectionsPaused: Int64
    /// The whole reply object.
    public var json: JSON
}

/// The reply to `metrics`.
public struct MetricsText: Sendable, Equatable {
    /// The media type of `text`.
    public var contentType: String
    /// The Prometheus text exposition, ready to serve.
    public var text: String
}

// MARK: Decoding

extension JSON {
    func string(_ key: String) throws(LoopdError) -> String {
        guard let s = self[key]?.stringValue else { throw .missing(key, in: self) }
        return s
    }

    func int(_ key: String) throws(LoopdError) -> Int64 {
        guard let n = self[key]?.integerValue else { throw .missing(key, in: self) }
        return n
    }

    func state(_ key: String = "state") throws(LoopdError) -> JobState {
        let raw = try string(key)
        guard let s = JobState(rawValue: raw) else { throw LoopdError(.invalidReply, "unknown job state \"\(raw)\"") }
        return s
    }

    func optionalString(_ key: String) -> String? { self[key]?.stringValue }
    func optionalInt(_ key: String) -> Int64? { self[key]?.integerValue }

    func date(_ key: String) -> Date? {
        guard let text = self[key]?.stringValue, let ms = Timestamp.parse(text) else { return nil }
        return Date(timeIntervalSince1970: Double(ms) / 1000)
    }

    /// The member, unless absent or null.
    func present(_ key: String) -> JSON? {
        guard let v = self[key], v != .null else { return nil }
        return v
    }
}

extension LoopdError {
    static func missing(_ key: String, in reply: JSON) -> LoopdError {
        LoopdError(.invalidReply, "reply has no valid \"\(key)\": \(reply.serialized().prefix(200))")
    }

    /// The error of an `ok:false` reply (or of a status's `error` member).
    init(errorObject: JSON?, reply: JSON) {
        let code = Code(wireValue: errorObject?["code"]?.stringValue ?? "internal")
        let message = errorObject?["message"]?.stringValue ?? ""
        self.init(code, message, job: try? JobOutcome(reply: reply))
    }
}

extension Pong {
    init(reply: JSON) throws(LoopdError) {
        self.init(pid: try reply.int("pid"), version: try reply.string("version"))
    }
}

extension JobOutcome {
    init(reply: JSON) throws(LoopdError) {
        self.init(job: try reply.string("job"), state: try reply.state(), worker: reply.optionalString("worker"),
                  result: reply.present("result"), attempt: reply.optionalInt("attempt").map { Int($0) },
                  duplicate: reply["duplicate"]?.boolValue ?? false, usage: JobUsage(member: reply))
    }
}

extension JobStatus {
    init(reply: JSON) throws(LoopdError) {
        self.init(job: try reply.string("job"), state: try reply.state(), worker: reply.optionalString("worker"),
                  action: reply.optionalString("action"), durable: reply["durable"]?.boolValue ?? false,
                  submittedAt: reply.date("submitted_at"), startedAt: reply.date("started_at"),
                  finishedAt: reply.date("finished_at"), queueMs: reply.optionalInt("queue_ms"),
                  runMs: reply.optionalInt("run_ms"), result: reply.present("result"),
                  error: reply.present("error").map { LoopdError(errorObject: $0, reply: .null) },
                  cancelledBy: reply.optionalInt("cancelled_by"), usage: JobUsage(member: reply))
        attempt = reply.optionalInt("attempt") ?? 1
        retries = reply.optionalInt("retries") ?? 0
        attempts = (reply["attempts"]?.arrayValue ?? []).map { a in
            FailedAttempt(attempt: a.optionalInt("attempt") ?? 0, code: a.optionalString("code") ?? "",
                          message: a.optionalString("message") ?? "", finishedAt: a.date("finished_at"))
        }
        args = reply["args"]?.arrayValue.map { $0.compactMap(\.stringValue) }
        submittedBy = reply.optionalInt("submitted_by")
        retryOf = reply.optionalString("retry_of")
        retriedAs = reply.optionalString("retried_as")
    }
}

extension JobsPage {
    init(reply: JSON) throws(LoopdError) {
        guard let list = reply["jobs"]?.arrayValue else { throw .missing("jobs", in: reply) }
        var jobs: [JobStatus] = []
        jobs.reserveCapacity(list.count)
        for item in list { jobs.append(try JobStatus(reply: item)) }
        self.init(jobs: jobs, nextCursor: reply.optionalString("next_cursor"))
    }
}

extension CancelOutcome {
    init(reply: JSON) throws(LoopdError) {
        guard let cancelled = reply["cancelled"]?.boolValue else { throw .missing("cancelled", in: reply) }
        self.init(job: try reply.string("job"), cancelled: cancelled, state: try reply.state(),
                  started: reply["started"]?.boolValue ?? false)
    }
}

extension WorkerInfo {
    /// A daemon from before `busy` named the running job to everyone: busy
    /// is then whether it named one.
    init(reply: JSON) throws(LoopdError) {
        let running = reply.optionalString("running")
        self.init(name: try reply.string("name"), mode: try reply.string("mode"),
                  placement: reply.optionalString("placement"), queued: reply.optionalInt("queued") ?? 0,
                  held: reply.optionalInt("held") ?? 0, running: running,
                  busy: reply["busy"]?.boolValue ?? (running != nil), runningAction: reply.optionalString("running_action"),
                  runningSince: reply.date("running_since"),
                  loop: reply.optionalString("loop") ?? "", stalledMs: reply.optionalInt("stalled_ms") ?? 0,
                  completed: reply.optionalInt("completed") ?? 0)
    }
}

extension ScheduleInfo {
    init(reply: JSON) throws(LoopdError) {
        self.init(name: try reply.string("name"), action: try reply.string("action"), when: try reply.string("when"),
                  catchUp: reply.optionalString("catch_up") ?? "one", overlap: reply.optionalString("overlap") ?? "skip",
                  delayMs: reply.optionalInt("delay_ms") ?? 0, paused: reply["paused"]?.boolValue ?? false,
                  nextRun: reply.date("next_run"), lastSlot: reply.date("last_slot"), lastJob: reply.optionalString("last_job"),
                  lastState: reply.optionalString("last_state").flatMap(JobState.init(rawValue:)),
                  lastError: reply.optionalString("last_error"), runs: reply.optionalInt("fired") ?? 0,
                  skipped: reply.optionalInt("skipped") ?? 0)
    }
}

extension DaemonStats {
    init(reply: JSON) {
        func n(_ key: String) -> Int64 { reply.optionalInt(key) ?? 0 }
        self.init(accepted: n("accepted"), completed: n("completed"), failed: n("failed"), timedOut: n("timed_out"),
                  cancelled: n("cancelled"), queued: n("queued"), running: n("running"),
                  connections: n("connections"), connectionsPaused: n("connections_paused"), json: reply)
    }
}

extension LoopdError: Equatable {
    /// Equal code, message, job and errno.
    public static func == (a: LoopdError, b: LoopdError) -> Bool {
        a.code == b.code && a.message == b.message && a.job == b.job && a.errno == b.errno
    }
}
