import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// The requests about jobs that exist: `status`, `cancel`, `wait`, `jobs`.
/// A job belongs to whoever submitted it (a result can hold a program's
/// output); administrators may manage every job, and to anyone else it
/// does not exist (`JobVisibility`). Main thread only.
extension JobScheduler {
    func status(_ jobID: String, id: RequestID?, from r: Requester) {
        switch sighting(jobID, for: r) {
        case .live(let job):
            r.sink.send { Response.ok(id: id, JobStatus.fields(job, includeResult: true), into: &$0) }
        case .finished(let finished):
            r.sink.send { Response.ok(id: id, EndedJobView(finished).statusFields(includeResult: true), into: &$0) }
        case .none:
            replyUnknownJob(id: id, to: r)
        }
    }

    /// Cancels a job that has not ended. One that has not started ends
    /// `cancelled` now; a running one is stopped by its lane (an exec child:
    /// SIGTERM, then SIGKILL after the action's grace period) and the reply
    /// comes once it has ended, saying whether the cancel ended it.
    func cancel(_ jobID: String, id: RequestID?, from r: Requester) {
        let job: Job
        switch sighting(jobID, for: r) {
        case .live(let live):
            job = live
        case .finished(let finished):
            r.sink.send { Response.ok(id: id, EndedJobView(finished).cancelTooLateFields, into: &$0) }
            return
        case .none:
            replyUnknownJob(id: id, to: r)
            return
        }
        switch job.state {
        case .ended:
            r.sink.send { Response.ok(id: id, EndedJobView(job).cancelTooLateFields, into: &$0) }
        case .accepted, .forgotten:
            preconditionFailure("job \(jobID) is \(job.state), which no request can see")
        case .awaitingCommit, .delayed, .queued, .running:
            if stop(job, by: r.owner.uid) {
                r.sink.send { Self.writeCancelReply(job, cancelled: true, requestID: id, into: &$0) }
            } else {
                _ = waiters.add(.cancel, on: job.id, sink: r.sink, requestID: id, uid: r.owner.uid)
            }
        }
    }

    /// Cancels `job`, which has not ended, for `uid`. True when it ended
    /// now (it had not started); otherwise its lane stops it (it started,
    /// or its lane took it and has not said so yet) and its end comes later.
    func stop(_ job: Job, by uid: UInt32) -> Bool {
        if job.state != .running, job.claim.cancel() {
            job.cancelRequestedBy = uid
            end(job, .failure(ProtocolError(.cancelled, "job \(job.id) was cancelled by uid \(uid) before it ran"),
                              result: .object([])))
            return true
        }
        if job.cancelRequestedBy == nil {
            job.cancelRequestedBy = uid
            job.queue.cancelRunning(job, by: uid)
        }
        return false
    }

    /// Replies when the job ends, as a waited `submit` would; or, if
    /// `timeoutMs` passes first, with its state then.
    func wait(_ jobID: String, timeoutMs: Int64?, id: RequestID?, from r: Requester) {
        let job: Job
        switch sighting(jobID, for: r) {
        case .live(let live):
            job = live
        case .finished(let finished):
            r.sink.send { EndedJobView(finished).writeReply(requestID: id, into: &$0) }
            return
        case .none:
            replyUnknownJob(id: id, to: r)
            return
        }
        if job.state.isEnded {
            r.sink.send { EndedJobView(job).writeReply(requestID: id, into: &$0) }
            return
        }
        do {
            try checkWaitQuota(uid: r.owner.uid)
        } catch {
            r.sink.send { Response.error(id: id, error, into: &$0) }
            return
        }
        let serial = waiters.add(.wait, on: jobID, sink: r.sink, requestID: id, uid: r.owner.uid)
        guard let timeoutMs else { return }
        let timer = LoopTimer(after: .milliseconds(timeoutMs)) { [unowned self] _ in
            // An end already reported answers the wait as an end, not as a timeout.
            recordReports()
            guard let waiter = waiters.take(serial: serial, of: jobID) else { return }
            waiter.sink.settle { JobReply.write(current: job, requestID: waiter.requestID, into: &$0) }
        }
        waiters.setTimer(timer, serial: serial, on: jobID)
        loop.add(timer, forMode: .common)
    }

    /// `jobs`: a page of the jobs the requester may see, oldest submission
    /// first, filtered; `next_cursor` continues after the page. Paging by
    /// submission order means a job that exists throughout is listed once,
    /// however many jobs are submitted between pages.
    func list(_ query: JobsQuery, id: RequestID?, from r: Requester) {
        switch page(query, for: r) {
        case .failure(let error):
            r.sink.send { Response.error(id: id, error, into: &$0) }
        case .success(let (jobs, more)):
            let next: JSON = more ? .string(cursor(after: jobs[jobs.count - 1])) : .null
            let entries = JSON.array(jobs.map { .object(JobStatus.fields($0, includeResult: false)) })
            r.sink.send { Response.ok(id: id, [("jobs", entries), ("next_cursor", next)], into: &$0) }
        }
    }

    /// A page of the jobs `r` may see that match `query`, and whether more
    /// do. `beside fleet`: listed with the fleet's jobs (`with_fleet`), so
    /// the attempts of fleet jobs this host ran are left out (their fleet
    /// jobs are listed), and a worker this host lacks matches nothing here
    /// instead of being refused.
    func page(_ query: JobsQuery, for r: Requester,
              besideFleet: Bool = false) -> Result<(jobs: [Job], more: Bool), ProtocolError> {
        var after: UInt64?
        if let cursor = query.cursor {
            guard let sequence = decodeCursor(cursor) else {
                return .failure(ProtocolError(.badRequest, "\"cursor\" is not one this run of loopd gave out; list again without it"))
            }
            after = sequence
        }
        if let name = query.worker, queue(named: name) == nil {
            guard besideFleet else { return .failure(ProtocolError(.unknownWorker, "no worker named \"\(name)\"")) }
            return .success(([], false))
        }
        let states = query.states.map(Set.init)
        let everyone = seesEveryJob(r)
        let matches = { (job: Job) -> Bool in
            (everyone || job.clientUID == r.owner.uid)
                && (query.worker.map { job.worker.name == $0 } ?? true)
                && (query.action.map { job.actionName == $0 } ?? true)
                && (query.submittedSinceUnixMs.map { job.submittedAtUnixMs >= $0 } ?? true)
                && (states.map { $0.contains(job.visibleState()) } ?? true)
                && !(besideFleet && job.origin.submitter.fleetRun != nil)
        }
        let jobs: [Job], more: Bool
        if let sources = indexSources(query, states: states, everyone: everyone, uid: r.owner.uid, after: after) {
            let visited: Int
            (jobs, more, visited) = table.page(after: after, limit: query.limit, walking: sources, matching: matches)
            lastPageVisited = visited
        } else {
            (jobs, more) = table.page(after: after, limit: query.limit, matching: matches)
            lastPageVisited = nil
        }
        return .success((jobs, more))
    }

    /// The cursor of a page that ends with `job`.
    func cursor(after job: Job) -> String { jobIDs.codec.cursor(after: job.sequence) }

    /// The index sets a filtered page walks: of the owner (for a client
    /// that sees only its own jobs), the worker, the action, or the states
    /// asked for, whichever holds the fewest jobs; every job that can match
    /// is in it. Nil without a filter the index serves: the page walks the
    /// table.
    func indexSources(_ query: JobsQuery, states: Set<JobState>?, everyone: Bool, uid: UInt32,
                              after: UInt64?) -> [SequenceSet.Members]? {
        let index = table.index
        var candidates: [[SequenceSet]] = []
        if !everyone { candidates.append([index.owner(uid) ?? SequenceSet()]) }
        if let name = query.worker { candidates.append(index.worker(name)) }
        if let name = query.action { candidates.append(index.action(name)) }
        var filed: Set<JobIndex.Filed> = []
        if let states {
            filed = Set(states.map(JobIndex.Filed.holding))
            var sets = filed.sorted { $0.rawValue < $1.rawValue }.map { index.state($0) }
            // A job its lane started shows as running before the lane's
            // report files it so: each worker's running job joins a
            // running filter.
            if filed.contains(.running) && !filed.contains(.waiting) {
                var started = SequenceSet()
                for q in queues {
                    if let id = q.worker.runningJob.jobID, let job = table[id] { started.insertIfAbsent(job.sequence) }
                }
                sets.append(started)
            }
            candidates.append(sets)
        }
        let cheapest = candidates.min { a, b in
            a.reduce(0) { $0 + $1.count } < b.reduce(0) { $0 + $1.count }
        }
        return cheapest.map { sets in sets.map { $0.members(after: after) } }
    }

    /// The sequence a cursor continues after: enciphered like the ids
    /// (`JobIDCodec`), so it tells nobody how many jobs were submitted
    /// before, and one from an earlier run (another key) is refused
    /// instead of paging wrongly.
    private func decodeCursor(_ cursor: String) -> UInt64? {
        guard let sequence = jobIDs.codec.sequence(ofCursor: cursor), sequence <= jobIDs.lastSequence else { return nil }
        return sequence
    }
}
