import LoopdClient

/// Why a refresh produced no reading: the conversation failed, or the
/// daemon refused a request. Either ends `loopctl top`.
enum TopFetchFailure: Error {
    case client(ClientError)
    case refused(RawReply)

    /// What loopctl prints and exits with.
    var output: CommandOutput {
        switch self {
        case .client(let error): .failure(error)
        case .refused(let reply): .refused(reply)
        }
    }
}

/// The requests of one refresh, on one connection.
enum TopFetch {
    /// The most pages of one `jobs` list a refresh reads (of
    /// `JobsQuery.maxLimit` jobs each): a bound on the work one second of
    /// watching asks of the daemon.
    static let maxPages = 5

    /// The daemon's version and pid (`ping`).
    static func identity(from client: LoopdClient.Blocking) throws(TopFetchFailure) -> (version: String, pid: Int64?) {
        let reply = try answer(client, client.start([("op", "ping")]))
        return (reply.json["version"]?.stringValue ?? "?", reply.json["pid"]?.integerValue)
    }

    /// One reading. The four first requests go out together (the client
    /// numbers them) and their replies are collected after; further pages
    /// of the job lists follow one at a time.
    static func reading(from client: LoopdClient.Blocking, failuresSinceUnixMs: Int64) throws(TopFetchFailure) -> TopReading {
        let statsRequest = client.start([("op", "stats")])
        let workersRequest = client.start([("op", "workers")])
        let runningRequest = client.start(jobsRequest(states: [.running], sinceUnixMs: nil, cursor: nil))
        let failuresRequest = client.start(
            jobsRequest(states: JobState.failures, sinceUnixMs: failuresSinceUnixMs, cursor: nil))

        let stats = try answer(client, statsRequest)
        let workers = try answer(client, workersRequest)
        guard let workerList = workers.json["workers"]?.arrayValue else {
            throw .client(.protocol("workers reply lacks the array \"workers\": \(workers.line)"))
        }
        let running = try jobs(client, first: runningRequest, states: [.running], sinceUnixMs: nil)
        let failures = try jobs(client, first: failuresRequest, states: JobState.failures, sinceUnixMs: failuresSinceUnixMs)
        return TopReading(
            counters: .init(stats: stats.json), workers: workerList.map(TopReading.Worker.init),
            running: running.jobs, failures: failures.jobs, isComplete: running.isComplete && failures.isComplete)
    }

    /// A `jobs` request for a page of the largest size.
    static func jobsRequest(states: [JobState], sinceUnixMs: Int64?, cursor: String?) -> [(String, JSON)] {
        var fields: [(String, JSON)] = [("op", "jobs"), ("state", .array(states.map { .string($0.rawValue) }))]
        if let sinceUnixMs { fields.append(("since", .string(Timestamp.format(unixMilliseconds: sinceUnixMs)))) }
        fields.append(("limit", .integer(Int64(JobsQuery.maxLimit))))
        if let cursor { fields.append(("cursor", .string(cursor))) }
        return fields
    }

    /// The jobs of the list whose first page `first` requested, reading at
    /// most `maxPages` pages.
    private static func jobs(_ client: LoopdClient.Blocking, first: LoopdClient.Blocking.Pending, states: [JobState],
                             sinceUnixMs: Int64?) throws(TopFetchFailure) -> (jobs: [TopReading.Job], isComplete: Bool)
    {
        var page = try jobsPage(try answer(client, first))
        var jobs = page.jobs.compactMap(TopReading.Job.init)
        var pages = 1
        while let cursor = page.nextCursor {
            guard pages < maxPages else { return (jobs, false) }
            let next = client.start(jobsRequest(states: states, sinceUnixMs: sinceUnixMs, cursor: cursor))
            page = try jobsPage(try answer(client, next))
            jobs += page.jobs.compactMap(TopReading.Job.init)
            pages += 1
        }
        return (jobs, true)
    }

    private static func jobsPage(_ reply: RawReply) throws(TopFetchFailure) -> JobList {
        do {
            return try JobList(reply)
        } catch {
            throw .client(error)
        }
    }

    /// The `ok` reply to `request`.
    private static func answer(_ client: LoopdClient.Blocking, _ request: LoopdClient.Blocking.Pending)
        throws(TopFetchFailure) -> RawReply
    {
        let reply: RawReply
        do {
            reply = try client.answer(request)
        } catch {
            throw .client(error)
        }
        guard reply.ok else { throw .refused(reply) }
        return reply
    }
}
