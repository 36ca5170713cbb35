import LoopdProtocol

/// A durable job as the journal keeps it: everything needed to queue it
/// again after a restart, and nothing about how far it got.
public struct DurableJob: Sendable, Equatable {
    /// The priority of a job that asked for none (`SubmitRequest.defaultPriority`).
    public static let defaultPriority: UInt32 = 1 << 31

    /// The daemon-assigned job id (unique across restarts).
    public var id: String
    /// The action name (`echo`, an `exec` action, …).
    public var action: String
    /// The client's arguments.
    public var args: [String]
    /// Where it runs: `"worker:NAME"`, `"any"` or `"key:KEY"`.
    public var placement: String
    /// `delay_ms` as submitted.
    public var delayMs: Int64
    /// `timeout_ms` as submitted, if any.
    public var timeoutMs: Int64?
    /// The run mode it was submitted for, if any.
    public var mode: String?
    /// When it was acknowledged, Unix milliseconds.
    public var submittedAt: Int64
    /// The submitting client's uid (SO_PEERCRED). A replay checks the
    /// action's allow lists again with these credentials, against the config
    /// in force then: a permission revoked while the daemon was down holds.
    public var clientUID: UInt32
    /// The client's primary gid; nil in records written before loopd kept it
    /// (such a replay is judged by the uid alone).
    public var clientGID: UInt32?
    /// The client's supplementary groups when it submitted (SO_PEERGROUPS).
    public var clientGroups: [UInt32]
    /// `priority` as submitted (the default in records written before loopd had priorities).
    public var priority: UInt32 = 1 << 31
    /// `expires_in_ms` as it applied (the request's, or the configured
    /// default); the deadline is `submittedAt` plus this, in wall time.
    public var expiresInMs: Int64?
    /// `retries` and `retry_backoff_ms` as submitted (0 and the default in
    /// records written before loopd kept them).
    public var retries = 0
    public var retryBackoffMs: Int64 = 0
    /// `unique_key` as submitted, if any.
    public var uniqueKey: String?
    /// Attempts that ended and were journaled: a replay runs attempt
    /// `attemptsDone + 1`, never one already recorded as ended.
    public var attemptsDone = 0
    /// The failed attempts' errors, the last `AttemptRecord.limit`.
    public var attemptErrors: [AttemptRecord] = []
    /// The ended job this one re-runs (`retry`), if it is such a job.
    public var retryOf: String?

    /// Whether the record needs the retry tail (a job without retries, a
    /// key or a `retry_of` is written as older releases wrote it).
    var hasRetryTail: Bool { retries > 0 || uniqueKey != nil || attemptsDone > 0 || retryOf != nil }

    /// Whether the record needs the scheduling tail: a priority other than
    /// the default, an expiry, or the retry tail that follows it.
    var hasSchedulingTail: Bool { priority != Self.defaultPriority || expiresInMs != nil || hasRetryTail }

    public init(
        id: String, action: String, args: [String], placement: String, delayMs: Int64 = 0,
        timeoutMs: Int64? = nil, mode: String? = nil, submittedAt: Int64, clientUID: UInt32,
        clientGID: UInt32? = nil, clientGroups: [UInt32] = [], priority: UInt32 = 1 << 31, expiresInMs: Int64? = nil
    ) {
        self.id = id
        self.action = action
        self.args = args
        self.placement = placement
        self.delayMs = delayMs
        self.timeoutMs = timeoutMs
        self.mode = mode
        self.submittedAt = submittedAt
        self.clientUID = clientUID
        self.clientGID = clientGID
        self.clientGroups = clientGroups
        self.priority = priority
        self.expiresInMs = expiresInMs
    }
}

/// The outcome of a durable job, kept queryable for the retention period.
public struct FinishedJob: Sendable, Equatable {
    /// The job id.
    public var id: String
    /// The state it ended in: `completed`, `failed`, `timed_out`, `cancelled` or `expired`.
    public var state: String
    /// The job's `result` object, as JSON text (opaque to the journal).
    public var resultJSON: String
    /// When it finished, Unix milliseconds; retention counts from here.
    public var finishedAt: Int64
    /// Who submitted it: only that uid (and root, and the daemon's own uid)
    /// may read its status. nil in records written before loopd kept it.
    public var clientUID: UInt32?
    /// Where and when it ran, and why it failed; nil in records written
    /// before loopd kept them.
    public var details: Details?

    /// A failure (failed, timed out, expired): kept for
    /// `limits.retention_failed_seconds` if that is longer than `journal.retention_seconds`.
    var isFailure: Bool {
        JobState(rawValue: state)?.isFailure ?? false
    }

    /// What `status` tells of a durable job after a restart, beyond its end.
    public struct Details: Sendable, Equatable {
        /// When it was submitted, Unix milliseconds.
        public var submittedAt: Int64
        /// When it started, Unix milliseconds; nil if it never ran.
        public var startedAt: Int64?
        /// The worker it was placed on.
        public var worker: String
        /// Its action.
        public var action: String
        /// The error code it ended with (nil: completed).
        public var errorCode: String?
        /// The error's message.
        public var errorMessage: String?
        /// The attempt it ended on (1 without retries) and the failed
        /// attempts' errors, the last `AttemptRecord.limit`.
        public var attempt = 1
        public var attemptErrors: [AttemptRecord] = []
        /// Its `unique_key`, if any: a restart rebuilds the key index from it.
        public var uniqueKey: String?
        /// What `retry` needs of it, and the jobs it is linked to; nil for
        /// most jobs (a reference, so an end without them costs one word).
        public var links: Links?

        /// Whether the record needs the retry tail.
        var hasRetryTail: Bool { attempt > 1 || !attemptErrors.isEmpty || uniqueKey != nil || links != nil }

        public init(submittedAt: Int64, startedAt: Int64?, worker: String, action: String,
                    errorCode: String? = nil, errorMessage: String? = nil, attempt: Int = 1,
                    attemptErrors: [AttemptRecord] = [], uniqueKey: String? = nil, links: Links? = nil) {
            self.links = links
            self.attempt = attempt
            self.attemptErrors = attemptErrors
            self.uniqueKey = uniqueKey
            self.submittedAt = submittedAt
            self.startedAt = startedAt
            self.worker = worker
            self.action = action
            self.errorCode = errorCode
            self.errorMessage = errorMessage
        }
    }

    /// What a durable end keeps for `retry`: the request of a failure (so
    /// it can be run again after a restart), the job it re-ran (`retry_of`)
    /// and the job that re-runs it (`retried_as`).
    public final class Links: Sendable, Equatable {
        public let request: DurableJob?
        public let retryOf: String?
        public let retriedAs: String?

        public init(request: DurableJob?, retryOf: String?, retriedAs: String?) {
            self.request = request
            self.retryOf = retryOf
            self.retriedAs = retriedAs
        }

        /// Nil when there is nothing to keep.
        static func make(request: DurableJob?, retryOf: String?, retriedAs: String?) -> Links? {
            request == nil && retryOf == nil && retriedAs == nil
                ? nil : Links(request: request, retryOf: retryOf, retriedAs: retriedAs)
        }

        public static func == (a: Links, b: Links) -> Bool {
            a.request == b.request && a.retryOf == b.retryOf && a.retriedAs == b.retriedAs
        }
    }

    public init(id: String, state: String, resultJSON: String, finishedAt: Int64, clientUID: UInt32? = nil,
                details: Details? = nil) {
        precondition(details == nil || clientUID != nil, "a finish record with details names its client")
        self.id = id
        self.state = state
        self.resultJSON = resultJSON
        self.finishedAt = finishedAt
        self.clientUID = clientUID
        self.details = details
    }
}

/// What `JobJournal.init` found on disk.
public struct JournalRecovery: Sendable, Equatable {
    /// Finished jobs still inside the retention period, oldest first.
    public var finished: [FinishedJob] = []
    /// Bytes cut from the end of the log: what a crash mid-commit left
    /// (a torn last record, garbage, blocks that never reached the disk).
    /// 0 normally.
    public var truncatedBytes = 0
    /// Where the cut began (a byte offset in the file); nil when nothing was cut.
    public var damagedAt: Int?
    /// Why the record there was not read; nil when nothing was cut.
    public var damage: String?
    /// When intact records followed the cut (blocks of a commit in flight
    /// written out of order), the side file holding the cut bytes; nil otherwise.
    public var corruptTailPath: String?
}

/// Counters for `stats` and tests. All counts are since `init`.
public struct JournalStats: Sendable, Equatable {
    /// Committed length of the log file in bytes.
    public var fileBytes = 0
    /// Durable jobs acknowledged and not finished.
    public var liveJobs = 0
    /// Finished jobs still retained.
    public var retainedFinished = 0
    /// Their estimated memory (`FinishedJob.retainedBytes`), bounded by
    /// `limits.max_retained_bytes`.
    public var retainedFinishedBytes = 0
    /// Successful commits (each: one write, one fdatasync when fsync is on).
    public var commits = 0
    /// Commits that failed and were rolled back.
    public var failedCommits = 0
    /// Records made durable by commits.
    public var records = 0
    /// `pwrite` calls made by commits (one per commit unless a write was short).
    public var writeCalls = 0
    /// `fdatasync` calls made by commits.
    public var syncCalls = 0
    /// Completed compactions.
    public var compactions = 0
    /// Bytes written to the log by commits and compactions (the snapshot each wrote).
    public var writtenBytes = 0
}
