import LoopdProtocol

/// What one refresh of `loopctl top` read from the daemon: its counters,
/// its workers, the running jobs and the recent failures, decoded from the
/// `stats`, `workers` and `jobs` replies. The daemon has already applied its
/// isolation rules: a job the caller may not see is not listed, and a
/// worker running one is only `busy`.
struct TopReading: Sendable, Equatable {
    /// The `stats` counters the header shows; nil for one the reply lacks.
    struct Counters: Sendable, Equatable {
        var accepted: Int64?
        var completed: Int64?
        var failed: Int64?
        var timedOut: Int64?
        var cancelled: Int64?
        var expired: Int64?
        var queued: Int64?
        var running: Int64?
        var connections: Int64?

        /// Jobs that ended badly on their own: failed or timed out (what
        /// the failure rate counts); nil when the reply lacks either.
        var failedOrTimedOut: Int64? {
            guard let failed, let timedOut else { return nil }
            return failed + timedOut
        }
    }

    /// One entry of the `workers` reply.
    struct Worker: Sendable, Equatable {
        var name: String
        var mode: String
        var queued: Int64?
        var held: Int64?
        /// The running job's id, when the daemon shows it to the caller.
        var runningJob: String?
        /// Whether it runs a job, whoever's.
        var busy: Bool
        var runningAction: String?
        var runningSinceUnixMs: Int64?
        /// `waiting`, `busy` or `stalled`.
        var loop: String
        var stalledMs: Int64?
    }

    /// One entry of a `jobs` reply.
    struct Job: Sendable, Equatable {
        var id: String
        var state: String
        var worker: String
        var action: String
        var startedAtUnixMs: Int64?
        var finishedAtUnixMs: Int64?
        /// The error's message, for a job that ended badly.
        var errorMessage: String?
    }

    var counters: Counters
    var workers: [Worker]
    /// Running jobs the caller may see, in the daemon's order.
    var running: [Job]
    /// Jobs failed, timed out or expired, submitted since the view's
    /// window began, in the daemon's order (oldest submission first).
    var failures: [Job]
    /// False when a list had more pages than one refresh reads
    /// (`TopFetch.maxPages`): the newest failures may be missing.
    var isComplete = true
}

extension TopReading.Counters {
    /// The counters of an `ok` `stats` reply.
    init(stats: JSON) {
        func count(_ key: String) -> Int64? { stats[key]?.integerValue }
        self.init(
            accepted: count("accepted"), completed: count("completed"), failed: count("failed"),
            timedOut: count("timed_out"), cancelled: count("cancelled"), expired: count("expired"),
            queued: count("queued"), running: count("running"), connections: count("connections"))
    }
}

extension TopReading.Worker {
    /// A worker as the `workers` reply describes it; "?" for a name, mode
    /// or loop state it lacks.
    init(_ worker: JSON) {
        self.init(
            name: worker["name"]?.stringValue ?? "?",
            mode: worker["mode"]?.stringValue ?? "?",
            queued: worker["queued"]?.integerValue,
            held: worker["held"]?.integerValue,
            runningJob: worker["running"]?.stringValue,
            // A daemon older than `busy` shows the job to everyone.
            busy: worker["busy"]?.boolValue ?? (worker["running"]?.stringValue != nil),
            runningAction: worker["running_action"]?.stringValue,
            runningSinceUnixMs: worker["running_since"]?.stringValue.flatMap(Timestamp.parse),
            loop: worker["loop"]?.stringValue ?? "?",
            stalledMs: worker["stalled_ms"]?.integerValue)
    }
}

extension TopReading.Job {
    /// A job as a `jobs` reply lists it; nil for an entry without an id.
    init?(_ job: JSON) {
        guard let id = job["job"]?.stringValue else { return nil }
        self.init(
            id: id,
            state: job["state"]?.stringValue ?? "?",
            worker: job["worker"]?.stringValue ?? "-",
            action: job["action"]?.stringValue ?? "-",
            startedAtUnixMs: job["started_at"]?.stringValue.flatMap(Timestamp.parse),
            finishedAtUnixMs: job["finished_at"]?.stringValue.flatMap(Timestamp.parse),
            errorMessage: job["error"]?["message"]?.stringValue)
    }
}
