/// A client's request id: any JSON string or integer, echoed verbatim.
public enum RequestID: Sendable, Equatable, Hashable {
    case string(String)
    case integer(Int64)

    public var json: JSON {
        switch self {
        case .string(let s): .string(s)
        case .integer(let n): .integer(n)
        }
    }
}

/// Where a job should run.
public enum Placement: Sendable, Equatable {
    /// The named worker.
    case worker(String)
    /// The least loaded worker.
    case any
    /// Always the same worker for the same key.
    case key(String)
}

/// The fields of a `submit`.
public struct SubmitRequest: Sendable, Equatable {
    public var action: String
    public var args: [String] = []
    public var placement: Placement = .any
    /// Reply when the job is done (the default), or at once with its id.
    public var wait = true
    public var delayMs: Int64 = 0
    public var timeoutMs: Int64?
    /// The worker run mode the job needs; nil: the default mode; "common": any mode the worker runs.
    public var mode: String?
    public var durable = false
    /// Lower runs first among the jobs waiting on the same worker (see `SubmitRequest.defaultPriority`).
    public var priority: UInt32 = SubmitRequest.defaultPriority
    /// End the job `expired` if it has not started this many milliseconds after submission; nil: never.
    public var expiresInMs: Int64?
    /// Extra attempts after a failed or timed-out one (`retries`); 0: none.
    public var retries = 0
    /// The base of the exponential backoff between attempts (`retry_backoff_ms`).
    public var retryBackoffMs: Int64 = RequestLimits.defaultRetryBackoffMs
    /// The client's idempotency key (`unique_key`): a second submit with it
    /// gets the first job back.
    public var uniqueKey: String?
    /// `fleet`: true puts the job in the daemon's fleet (any node may run
    /// it), false keeps it on this host; nil: the daemon's `fleet.jobs`.
    public var fleet: Bool?
    /// `node`: a fleet job that only that node may run.
    public var node: String?

    public init(action: String, args: [String] = [], placement: Placement = .any, wait: Bool = true,
                delayMs: Int64 = 0, timeoutMs: Int64? = nil, mode: String? = nil, durable: Bool = false,
                priority: UInt32 = SubmitRequest.defaultPriority, expiresInMs: Int64? = nil) {
        self.action = action
        self.args = args
        self.placement = placement
        self.wait = wait
        self.delayMs = delayMs
        self.timeoutMs = timeoutMs
        self.mode = mode
        self.durable = durable
        self.priority = priority
        self.expiresInMs = expiresInMs
    }
}

/// One operation of the protocol.
public enum Operation: Sendable, Equatable {
    case ping
    case submit(SubmitRequest)
    case status(job: String)
    case cancel(job: String)
    case workers
    case inspect(worker: String)
    case mode(worker: String, mode: String)
    case stats
    /// The daemon's metrics in the Prometheus text exposition format.
    case metrics
    /// Lists jobs, oldest submission first, a page at a time.
    case jobs(JobsQuery)
    /// Replies when the job has ended, or once `timeoutMs` have passed.
    case wait(job: String, timeoutMs: Int64?)
    /// Lists the configured schedules: when each fires, what it last did.
    case schedules
    /// Lists the nodes of the daemon's fleet: state, heartbeat, lanes.
    case fleet
    /// An administrator's request about one schedule.
    case schedule(ScheduleCommand, name: String)
    /// Submits ended jobs again, each as a new job linked to the old one.
    case retry(EndedJobs)
    /// Forgets ended jobs before their retention ends.
    case discard(EndedJobs)
}

/// Which ended jobs a `retry` or `discard` is about: one by id, or every
/// one the client may see that matches the `jobs` filters, up to a limit.
public enum EndedJobs: Sendable, Equatable {
    case job(String)
    /// `states` are final states only; nil means the failures
    /// (`JobState.failures`). No cursor.
    case matching(JobsQuery)
}

/// What an administrator may do to a schedule.
public enum ScheduleCommand: String, Sendable, Equatable, CaseIterable {
    /// Stop firing at its slots (kept across restarts) until `resume`.
    case pause
    /// Fire at its slots again, from the next one.
    case resume
    /// Fire once now, outside its grid.
    case trigger
}

/// A parsed request line.
public struct Request: Sendable, Equatable {
    public var id: RequestID?
    public var operation: Operation

    public init(id: RequestID?, operation: Operation) {
        self.id = id
        self.operation = operation
    }
}
