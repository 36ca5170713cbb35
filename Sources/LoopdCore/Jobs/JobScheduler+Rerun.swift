import LoopPlatform
import LoopdProtocol

/// `retry` and `discard`: what an operator does with ended jobs, above all
/// with failures, which are kept longer than other ends for this
/// (`limits.retention_failed_*`). Not the automatic `retries` of a
/// submit (`JobScheduler+Retries`): a `retry` submits an ended job again
/// as a new job, linked both ways (`retry_of`, `retried_as`). Either
/// request sees only the jobs its sender may manage (`JobVisibility`).
/// Main thread only.
extension JobScheduler {
    /// An ended job as `retry` and `discard` find it: live in the table, or
    /// only in the journal (a durable end from before a restart).
    enum EndedJob {
        case live(Job)
        case finished(FinishedJob)

        var id: String {
            switch self {
            case .live(let job): job.id
            case .finished(let f): f.id
            }
        }

        /// Whether the journal holds it (a change to it is journaled).
        var isDurable: Bool {
            switch self {
            case .live(let job): job.durable
            case .finished: true
            }
        }
    }

    func retry(_ which: EndedJobs, id: RequestID?, from r: Requester) {
        switch which {
        case .job(let jobID):
            switch endedJob(jobID, for: r) {
            case .failure(let error):
                r.sink.send { Response.error(id: id, error, into: &$0) }
            case .success(let old):
                switch rerun(old, from: r) {
                case .failure(let error):
                    r.sink.send { Response.error(id: id, error, into: &$0) }
                case .success(let job):
                    answer(r, id: id, waiting: job.durable || old.isDurable) {
                        [("job", .string(job.id)), ("retry_of", .string(old.id)), ("state", .string(job.visibleState().rawValue))]
                    }
                }
            }
        case .matching(let query):
            let (jobs, more) = endedJobs(query, for: r, leavingOutRetried: true)
            var retried: [JSON] = [], refused: [JSON] = []
            var journaled = false
            for old in jobs {
                switch rerun(old, from: r) {
                case .success(let job):
                    journaled = journaled || job.durable || old.isDurable
                    retried.append(.object([("job", .string(old.id)), ("as", .string(job.id))]))
                case .failure(let error): refused.append(.object([("job", .string(old.id)), ("error", error.json)]))
                }
            }
            answer(r, id: id, waiting: journaled) {
                [("retried", .array(retried)), ("refused", .array(refused)), ("more", .bool(more))]
            }
        }
    }

    func discard(_ which: EndedJobs, id: RequestID?, from r: Requester) {
        switch which {
        case .job(let jobID):
            switch endedJob(jobID, for: r) {
            case .failure(let error):
                r.sink.send { Response.error(id: id, error, into: &$0) }
            case .success(let old):
                let journaled = forget(old)
                answer(r, id: id, waiting: journaled) { [("job", .string(old.id)), ("discarded", true)] }
            }
        case .matching(let query):
            let (jobs, more) = endedJobs(query, for: r)
            var journaled = false
            for old in jobs { journaled = forget(old) || journaled }
            answer(r, id: id, waiting: journaled) {
                [("discarded", .array(jobs.map { .string($0.id) })), ("more", .bool(more))]
            }
        }
    }

    /// Replies now, or, `waiting`, once the commit of what the request
    /// journaled has returned: a durable change is acknowledged only once
    /// it is on disk (`journal_unavailable` if it could not be made so).
    private func answer(_ r: Requester, id: RequestID?, waiting: Bool, _ fields: @escaping () -> [(String, JSON)]) {
        guard waiting, let journalStore else {
            r.sink.send { Response.ok(id: id, fields(), into: &$0) }
            return
        }
        r.sink.owe()
        journalStore.whenCommitted { failure in
            if let failure {
                let error = ProtocolError(.journalUnavailable, "the change could not be made durable: \(failure)")
                r.sink.settle { Response.error(id: id, error, into: &$0) }
            } else {
                r.sink.settle { Response.ok(id: id, fields(), into: &$0) }
            }
        }
    }

    // MARK: finding them

    /// The ended job `jobID`, if `r` may manage it.
    private func endedJob(_ jobID: String, for r: Requester) -> Result<EndedJob, ProtocolError> {
        switch sighting(jobID, for: r) {
        case .none:
            return .failure(Self.unknownJob)
        case .finished(let f):
            return .success(.finished(f))
        case .live(let job):
            guard job.state.isEnded else {
                return .failure(ProtocolError(.badRequest, "job \(jobID) has not ended (it is \(job.visibleState().rawValue)): "
                    + "wait for it, or cancel it first"))
            }
            return .success(.live(job))
        }
    }

    /// Up to `query.limit` ended jobs `r` may manage that match `query`
    /// (and, `leavingOutRetried`, have not been retried yet): those of the
    /// table in submission order, then those only the journal still holds,
    /// in the order they finished. `more`: others matched.
    private func endedJobs(_ query: JobsQuery, for r: Requester,
                           leavingOutRetried: Bool = false) -> (jobs: [EndedJob], more: Bool) {
        let wanted = Set(query.states ?? JobState.failures)
        let states = Set(wanted.map(\.rawValue))
        let everyone = seesEveryJob(r)
        let since = query.submittedSinceUnixMs ?? .min
        let matches = { (job: Job) -> Bool in
            job.state.isEnded && (everyone || job.clientUID == r.owner.uid)
                && wanted.contains(job.visibleState())
                && (query.worker.map { job.worker.name == $0 } ?? true)
                && (query.action.map { job.actionName == $0 } ?? true)
                && job.submittedAtUnixMs >= since
                && !(leavingOutRetried && job.retriedAs != nil)
        }
        // The state index holds every ended job of those states: the walk never visits the queue.
        let sources = indexSources(query, states: wanted, everyone: everyone, uid: r.owner.uid, after: nil) ?? []
        let (live, moreLive, _) = table.page(after: nil, limit: query.limit, walking: sources, matching: matches)
        var found = live.map(EndedJob.live)
        if moreLive { return (found, true) }
        for f in journal?.finishedJobs() ?? [] where table[f.id] == nil {
            guard (everyone || f.clientUID == r.owner.uid), states.contains(f.state),
                  query.worker.map({ f.details?.worker == $0 }) ?? true,
                  query.action.map({ f.details?.action == $0 }) ?? true,
                  (f.details?.submittedAt ?? .min) >= since,
                  !(leavingOutRetried && f.details?.links?.retriedAs != nil) else { continue }
            if found.count == query.limit { return (found, true) }
            found.append(.finished(f))
        }
        return (found, false)
    }

    // MARK: doing it

    /// Submits `old` again for `r`, as `r`'s job, through every check a
    /// submit goes through; links the two.
    private func rerun(_ old: EndedJob, from r: Requester) -> Result<Job, ProtocolError> {
        var request: SubmitRequest
        switch old {
        case .live(let job):
            request = SubmitRequest(job)
        case .finished(let f):
            guard let kept = f.details?.links?.request else {
                return .failure(ProtocolError(.badRequest, "job \(f.id) ended \(f.state) before loopd restarted, and only "
                    + "a failure's request is kept across a restart"))
            }
            request = SubmitRequest(kept)
        }
        // A retry runs now, and is a new job: its own submit, not a duplicate of the old one.
        request.delayMs = 0
        request.uniqueKey = nil
        let job: Job
        do {
            job = try accept(request, submitter: r.submitter, jobID: nil, submittedAt: unixMilliseconds(), retryOf: old.id)
        } catch {
            return .failure(error)
        }
        dispatch(job, ack: nil)
        link(old, retriedAs: job.id)
        log(.info, "job \(old.id) retried as job \(job.id) by uid \(r.owner.uid)", [(.jobID, job.id)])
        return .success(job)
    }

    /// Records that `old` was retried as `newID`, for `status` and, for a
    /// durable job, in the journal (a later finish record wins).
    private func link(_ old: EndedJob, retriedAs newID: String) {
        switch old {
        case .live(let job):
            job.retriedAs = newID
            guard job.durable, let journalStore, case .ended(let end) = job.state else { return }
            journalStore.keepEnd(of: job, end)
        case .finished(var f):
            guard let journalStore, var details = f.details else { return }
            details.links = FinishedJob.Links(request: details.links?.request, retryOf: details.links?.retryOf,
                                              retriedAs: newID)
            f.details = details
            journalStore.keep(f)
        }
    }

    /// Forgets an ended job now, in memory and, for a durable one, in the
    /// journal; whether it journaled the discard.
    @discardableResult
    private func forget(_ old: EndedJob) -> Bool {
        switch old {
        case .live(let job):
            forget(job)
            guard job.durable, let journalStore else { return false }
            journalStore.discard(id: job.id)
            return true
        case .finished(let f):
            guard let journalStore else { return false }
            journalStore.discard(id: f.id)
            return true
        }
    }
}

extension SubmitRequest {
    /// The request `job` was accepted with, as far as a re-run needs it.
    init(_ job: Job) {
        self.init(action: job.actionName, args: job.args, placement: job.placement, wait: false, delayMs: job.delayMs,
                  timeoutMs: job.timeoutMs, mode: job.mode, durable: job.durable, priority: job.priority,
                  expiresInMs: job.expiresInMs)
        retries = job.retries
        retryBackoffMs = job.retryBackoffMs
        uniqueKey = job.uniqueKey
    }
}
