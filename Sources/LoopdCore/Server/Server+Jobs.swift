import LoopRuntime
import LoopdProtocol

/// A job's life on the main thread: acceptance, the journal, the hand-over
/// to its worker, its end and the replies it owes. Main thread only.
extension Server {
    func submit(_ s: SubmitRequest, id: RequestID?, from c: Connection) {
        do {
            let reply = s.wait ? DirectReply(channel: c.replies, requestID: id) : nil
            let job = try accept(s, owner: JobOwner(c.peer), jobID: nil, submittedAt: unixMilliseconds(), reply: reply)
            reply?.channel.expectReply()
            if s.durable {
                awaitingCommit.append((job, s.wait ? nil : c, id))
                job.worker.heldForCommit += 1
            } else if job.worker.heldForCommit > 0 {
                // A durable job ahead of this one on the same worker waits
                // for the commit: so does this one, or it would overtake it.
                // It needs no journal, so it is acknowledged now and runs
                // after the commit whether or not the commit succeeds.
                job.awaitingCommit = true
                awaitingCommit.append((job, nil, id))
                job.worker.heldForCommit += 1
                if !s.wait { c.sendJobReply(id: id, job) }
            } else {
                job.worker.dispatch(job)
                if !s.wait { c.sendJobReply(id: id, job) }
            }
        } catch {
            c.send(Response.error(id: id, error))
        }
    }

    /// Checks and records a job. Durable jobs are appended to the journal
    /// and dispatched after the commit that makes them durable.
    @discardableResult
    func accept(_ s: SubmitRequest, owner: JobOwner, jobID: String?,
                submittedAt: Int64, reply: DirectReply? = nil) throws(ProtocolError) -> Job {
        guard state == .running else { throw ProtocolError(.shuttingDown, "loopd is stopping and accepts no new jobs") }
        guard let action = actions[s.action] else { throw ProtocolError(.unknownAction, "no action named \"\(s.action)\"") }
        guard config.permits(action: s.action, uid: owner.uid, gid: owner.gid, supplementaryGroups: owner.groups,
                             daemonUID: daemonUID) else {
            throw ProtocolError(.forbidden, "uid \(owner.uid) may not run action \"\(s.action)\"")
        }
        try action.validate(args: s.args)
        let worker = try worker(for: s.placement)
        guard worker.outstanding < config.limits.maxQueuedJobsPerWorker else {
            throw ProtocolError(.queueFull, "worker \(worker.name) has \(worker.outstanding) jobs queued, the limit")
        }
        if s.durable && journal == nil {
            throw ProtocolError(.journalUnavailable, "the journal is not open")
        }
        let job = Job(id: jobID ?? nextJobID(), request: s, action: action, worker: worker, owner: owner,
                      acceptedAt: monotonicNow(), submittedAtUnixMs: submittedAt, reply: reply)
        jobs[job.id] = job
        worker.outstanding += 1
        stats.accepted += 1
        if s.durable, jobID == nil {
            journal?.appendSubmitted(DurableJob(job))
            armCommit()
            job.awaitingCommit = true
        }
        return job
    }

    /// Called by the `.beforeWaiting` observer: commits every record
    /// appended during this pass with one write and one fsync, then releases
    /// the durable jobs it covered and the non-durable jobs held behind them,
    /// in arrival order.
    func commitJournal() {
        guard let journal, journal.hasUncommitted else { return }
        let batch = awaitingCommit
        awaitingCommit.removeAll(keepingCapacity: true)
        for w in workers { w.heldForCommit = 0 }
        do {
            try journal.commit()
            for (job, connection, id) in batch where job.awaitingCommit {
                job.awaitingCommit = false
                job.worker.dispatch(job)
                connection?.sendJobReply(id: id, job)
            }
            // Expires finished jobs past retention and rewrites a mostly dead
            // log; without this the log and its in-memory state grew for the
            // daemon's lifetime (bug: journal-never-compacted).
            compactJournal(journal)
        } catch {
            log(.error, "journal commit failed: \(error)")
            for (job, connection, id) in batch where job.awaitingCommit {
                job.awaitingCommit = false
                guard job.request.durable else {
                    job.worker.dispatch(job)  // held only for order; it never needed the journal
                    continue
                }
                _ = job.transition(from: .pending, to: .cancelled)
                let failure = ProtocolError(.journalUnavailable, "the job could not be made durable: \(error)")
                connection?.send(Response.error(id: id, failure))
                finish(job, .failure(failure, result: .object([])), state: .failed, journaled: false)
            }
        }
    }

    /// Expires retained finishes past retention, compacts a mostly dead
    /// log, and arms the expiry timer for the next retained finish.
    func compactJournal(_ journal: JobJournal) {
        do {
            try journal.compactIfNeeded()
        } catch {
            log(.warning, "journal compaction failed (not fatal: the log stays in use as it is): \(error)")
        }
        scheduleJournalExpiry(journal)
    }

    /// Commits expire retained finishes as they pass; this one-shot timer
    /// does it when none comes (bug: durable-results-held-while-idle: an
    /// idle daemon kept every finish of its last busy minute in memory).
    /// Finishes due within a second of each other expire together, so it
    /// wakes the loop at most once a second, and never when none is retained.
    func scheduleJournalExpiry(_ journal: JobJournal) {
        guard journalExpiryTimer == nil, let due = journal.nextExpiry else { return }
        let wait = Swift.max(0, due - journal.clock()) + 1000
        let timer = LoopTimer(after: .milliseconds(wait), tolerance: .milliseconds(500)) { [unowned self] _ in
            journalExpiryTimer = nil
            if let journal = self.journal { compactJournal(journal) }
        }
        journalExpiryTimer = timer
        loop.add(timer, forMode: .common)
    }

    /// Records the job ends workers reported, in the order they reported
    /// them. Called by the block each report queues on this loop, and before
    /// a connection's requests are read: a worker writes a waiting client's
    /// reply right after reporting the end, so a request the client sends
    /// after that reply (`status`, `stats`) must find the end recorded even
    /// when it is read before that block runs.
    func recordFinishedJobs() {
        guard let ends = reportedEnds.takeAll() else { return }
        for (job, outcome) in ends {
            let state: JobState
            if case .success = outcome { state = .completed } else { state = .failed }
            finish(job, outcome, state: state, answeredByWorker: true)
        }
    }

    /// Records a job's end, answers whoever waits for it (unless its worker
    /// did: `answeredByWorker`), and journals it.
    func finish(_ job: Job, _ outcome: ActionOutcome, state: JobState, journaled: Bool = true,
                answeredByWorker: Bool = false) {
        guard !job.state.isFinal else { return }
        job.state = state
        switch outcome {
        case .success(let result):
            job.result = result
            stats.completed += 1
        case .failure(let e, let result):
            job.result = result
            job.error = e
            if state == .cancelled { stats.cancelled += 1 } else { stats.failed += 1 }
        }
        let worker = job.worker
        worker.outstanding -= 1
        if state != .cancelled { worker.finished += 1 }
        let micros = (monotonicNow() &- job.acceptedAt) / 1000
        stats.recordLatency(microseconds: micros)
        if job.request.durable && journaled {
            journal?.appendFinished(FinishedJob(id: job.id, state: state.rawValue,
                                                resultJSON: (job.result ?? .object([])).serialized(),
                                                finishedAt: unixMilliseconds(), clientUID: job.clientUID))
            armCommit()
        }
        log.jobEnded(JobEndRecord(jobID: job.id, worker: worker.name, action: job.request.action, durationUsec: micros,
                                  state: state, error: job.error, clientUID: job.clientUID))
        if let reply = job.reply, !answeredByWorker {
            reply.channel.replyTakenBack()
            if let c = connections[reply.channel.connectionID] {
                if let e = job.error {
                    c.sendError(id: reply.requestID, e, job.replyFields(includeDetails: false))
                } else {
                    c.sendJobReply(id: reply.requestID, job)
                }
                c.closeIfDone()
            }
        }
        retire(job)
    }

    /// Keeps finished jobs queryable, up to a bound (the oldest is forgotten
    /// first); durable ones stay answerable from the journal for its retention.
    private func retire(_ job: Job) {
        if let evicted = finishedWindow.add(job.id) { jobs[evicted] = nil }
    }
}
