/// The protocol's operations (docs/PROTOCOL.md, "Operations"). Each throws
/// `LoopdError` (the daemon's refusal or job outcome, or a connection
/// error), or `CancellationError` when the calling task is cancelled.
extension LoopdClient {
    /// `ping`: the daemon's pid and version.
    public func ping() async throws -> Pong {
        try Pong(reply: try await call("ping"))
    }

    /// `submit`: runs `action` with `args`. With `options.wait` (the
    /// default) it returns once the job completed; a job that failed, timed
    /// out or was cancelled throws `LoopdError` with code `jobFailed`,
    /// `timeout` or `cancelled` and the job in `error.job`. Without wait it
    /// returns the accepted job (`queued`, `delayed` or `held`).
    @discardableResult
    public func submit(_ action: String, _ args: [String] = [], options: SubmitOptions = SubmitOptions())
        async throws -> JobOutcome {
        var fields: [(String, JSON)] = [("action", .string(action))]
        if !args.isEmpty { fields.append(("args", .array(args.map { .string($0) }))) }
        let options = options.fields
        if !options.isEmpty { fields += options }
        return try JobOutcome(reply: try await call("submit", fields))
    }

    /// `wait`: waits for `job` to end and answers as a waited `submit` does.
    /// With `timeoutMs`, returns after that long even if the job has not
    /// ended (then `state` is not final and `result` is nil).
    public func wait(job: String, timeoutMs: Int64? = nil) async throws -> JobOutcome {
        var fields: [(String, JSON)] = [("job", .string(job))]
        if let timeoutMs { fields.append(("timeout_ms", .integer(timeoutMs))) }
        return try JobOutcome(reply: try await call("wait", fields))
    }

    /// `status`: the job's state, times and, once finished, its result.
    public func status(job: String) async throws -> JobStatus {
        try JobStatus(reply: try await call("status", [("job", .string(job))]))
    }

    /// `cancel`: cancels `job` (a running one too: returns once it has ended).
    @discardableResult
    public func cancel(job: String) async throws -> CancelOutcome {
        try CancelOutcome(reply: try await call("cancel", [("job", .string(job))]))
    }

    /// `jobs`: one page of the jobs that match `query`.
    public func jobs(_ query: JobsQuery = JobsQuery()) async throws -> JobsPage {
        try JobsPage(reply: try await call("jobs", query.fields))
    }

    /// Every job that matches `query` (its `cursor` is where it starts),
    /// page after page, fetched as the sequence is iterated.
    public func allJobs(_ query: JobsQuery = JobsQuery()) -> JobsSequence {
        JobsSequence(client: self, query: query)
    }

    /// `workers`: every worker's mode, load and loop state.
    public func workers() async throws -> [WorkerInfo] {
        let reply = try await call("workers")
        guard let list = reply["workers"]?.arrayValue else { throw LoopdError.missing("workers", in: reply) }
        var workers: [WorkerInfo] = []
        for item in list { workers.append(try WorkerInfo(reply: item)) }
        return workers
    }

    /// `inspect`: the live description of `worker`'s run loop, text for people.
    public func inspect(worker: String) async throws -> String {
        try await call("inspect", [("worker", .string(worker))]).string("description")
    }

    /// `mode`: switches `worker`'s run mode (administrators only).
    @discardableResult
    public func mode(worker: String, mode: String) async throws -> ModeChange {
        let reply = try await call("mode", [("worker", .string(worker)), ("mode", .string(mode))])
        return ModeChange(worker: try reply.string("worker"), mode: try reply.string("mode"),
                          previous: try reply.string("previous"))
    }

    /// `retry` of one ended job: the new job's id (it carries `retry_of`).
    public func retry(job: String) async throws -> String {
        try await call("retry", [("job", .string(job))]).string("job")
    }

    /// `retry` of every ended job that matches `query` (its `states`: end
    /// states; nil: the failures), up to its limit.
    public func retry(_ query: JobsQuery) async throws -> RetryOutcome {
        let reply = try await call("retry", query.fields)
        guard let retried = reply["retried"]?.arrayValue, let refused = reply["refused"]?.arrayValue else {
            throw LoopdError.missing("retried", in: reply)
        }
        return RetryOutcome(
            retried: retried.map { ($0["job"]?.stringValue ?? "", $0["as"]?.stringValue ?? "") },
            refused: refused.map { r in
                (r["job"]?.stringValue ?? "",
                 LoopdError(.init(wireValue: r["error"]?["code"]?.stringValue ?? ""),
                            r["error"]?["message"]?.stringValue ?? ""))
            },
            more: reply["more"]?.boolValue ?? false)
    }

    /// `discard` of one ended job.
    public func discard(job: String) async throws {
        _ = try await call("discard", [("job", .string(job))])
    }

    /// `discard` of every ended job that matches `query` (as `retry(_:)`);
    /// the ids discarded, and whether more matched.
    public func discard(_ query: JobsQuery) async throws -> (jobs: [String], more: Bool) {
        let reply = try await call("discard", query.fields)
        guard let jobs = reply["discarded"]?.arrayValue else { throw LoopdError.missing("discarded", in: reply) }
        return (jobs.compactMap(\.stringValue), reply["more"]?.boolValue ?? false)
    }

    /// `schedules`: every configured schedule, by name.
    public func schedules() async throws -> [ScheduleInfo] {
        let reply = try await call("schedules")
        guard let list = reply["schedules"]?.arrayValue else { throw LoopdError.missing("schedules", in: reply) }
        var schedules: [ScheduleInfo] = []
        for item in list { schedules.append(try ScheduleInfo(reply: item)) }
        return schedules
    }

    /// `pause`, `resume` or `trigger` of the schedule `name` (administrators only).
    @discardableResult
    public func schedule(_ command: ScheduleCommand, _ name: String) async throws -> ScheduleChange {
        let reply = try await call(command.rawValue, [("schedule", .string(name))])
        return ScheduleChange(schedule: try reply.string("schedule"), paused: reply["paused"]?.boolValue ?? false,
                              job: reply.optionalString("job"))
    }

    /// `stats`: the daemon's counters.
    public func stats() async throws -> DaemonStats {
        DaemonStats(reply: try await call("stats"))
    }

    /// `metrics`: the Prometheus text exposition.
    public func metrics() async throws -> MetricsText {
        let reply = try await call("metrics")
        return MetricsText(contentType: try reply.string("content_type"), text: try reply.string("text"))
    }
}

extension JobsQuery {
    /// The request fields, defaults left out.
    var fields: [(String, JSON)] {
        var f: [(String, JSON)] = []
        if let states {
            f.append(("state", .array(states.map { .string($0.rawValue) })))
        }
        if let worker { f.append(("worker", .string(worker))) }
        if let action { f.append(("action", .string(action))) }
        if let since = submittedSinceUnixMs { f.append(("since", .string(Timestamp.format(unixMilliseconds: since)))) }
        if limit != JobsQuery.defaultLimit { f.append(("limit", .integer(Int64(limit)))) }
        if let cursor { f.append(("cursor", .string(cursor))) }
        if fleet { f.append(("fleet", true)) }
        if withFleet { f.append(("with_fleet", true)) }
        return f
    }
}

/// Every job a `jobs` query matches, page by page (`LoopdClient.allJobs`).
public struct JobsSequence: AsyncSequence, Sendable {
    /// A job.
    public typealias Element = JobStatus

    let client: LoopdClient
    let query: JobsQuery

    /// An iterator that fetches the next page when the current one is used up.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let client: LoopdClient
        var query: JobsQuery
        var page: [JobStatus] = []
        var index = 0
        var finished = false

        /// The next job; nil after the last page.
        public mutating func next() async throws -> JobStatus? {
            while index == page.count {
                if finished { return nil }
                let reply = try await client.jobs(query)
                page = reply.jobs
                index = 0
                if let cursor = reply.nextCursor { query.cursor = cursor } else { finished = true }
            }
            defer { index += 1 }
            return page[index]
        }
    }

    /// An iterator from the query's first page.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(client: client, query: query) }
}
