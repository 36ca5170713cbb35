import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// How jobs end: the lanes' reports, the record of each end, the replies
/// it owes, and retention. Main thread only.
extension JobScheduler {
    /// Takes what the lanes reported, in the order they reported it. Runs
    /// in the block the mailbox queues, and before a connection's requests
    /// are read: a lane writes a waiting client's reply right after posting
    /// the job's end, so a request the client sends after that reply
    /// (`status`, `stats`) must find the end recorded even when it is read
    /// before that block runs.
    func recordReports() {
        guard let reports = mailbox.takeAll() else { return }
        for report in reports {
            switch report {
            case .started(let job):
                move(job, to: .running)
            case .ended(let ends, let repliesWrittenByLane):
                for e in ends {
                    if e.job.willRetry(after: e.outcome) {
                        retry(e.job, after: e.outcome)
                        continue
                    }
                    if e.job.reply != nil { stats.recordReply(byWorker: repliesWrittenByLane) }
                    end(e.job, e.outcome, usage: e.usage, answeredByLane: true)
                }
            case .flush(let sinks):
                for sink in sinks { sink.endpoint?.replyQueued(unsent: sink.unsentBytes) }
            }
        }
    }

    /// Records a job's end: counts and logs it, tells its store (unless
    /// `stored` is false: a durable job whose submit never reached the
    /// journal), answers whoever waits for it (a waited submit unless its
    /// lane did: `answeredByLane`), and retains it for `status`.
    func end(_ job: Job, _ outcome: ActionOutcome, usage: JobUsage? = nil, stored: Bool = true,
             answeredByLane: Bool = false) {
        let end = Job.End(outcome)
        if job.endedAtUnixMs == 0 { job.endedAtUnixMs = unixMilliseconds() }
        job.usage = usage
        if let usage { job.metrics.used(usage) }
        switch outcome {
        case .success(let result):
            job.result = result
        case .failure(let e, let result):
            job.result = result
            job.error = e
            if job.retries > 0 { recordLastAttempt(job, e) }
        }
        move(job, to: .ended(end))
        unschedule(job)
        stats.record(end)
        let queue = job.queue
        queue.outstanding -= 1
        outstandingJobs -= 1
        let argBytes = Job.argumentBytes(job.args)
        ledger.change(job.clientUID) {
            $0.jobs -= 1
            $0.argBytes -= argBytes
        }
        if end != .cancelled { queue.finished += 1 }
        let micros = (monotonicNanoseconds() &- job.acceptedAt) / 1000
        stats.recordLatency(microseconds: micros)
        job.metrics.ended(end.protocolState)
        if stored, let store = store(of: job) { store.keepEnd(of: job, end) }
        log.jobEnded(JobEndRecord(jobID: job.id, worker: job.worker.name, action: job.actionName, durationUsec: micros,
                                  state: end.protocolState, error: job.error, clientUID: job.clientUID,
                                  priority: job.priority == SubmitRequest.defaultPriority ? nil : job.priority,
                                  attempt: job.retries > 0 ? job.attempt : nil, usage: usage))
        if let reply = job.reply, !answeredByLane {
            stats.recordReply(byWorker: false)
            reply.sink.settle { JobReply.write(job, endedWith: outcome, usage: usage, requestID: reply.requestID, into: &$0) }
        }
        for waiter in waiters.takeAll(of: job.id) {
            waiter.sink.settle { out in
                switch waiter.kind {
                case .wait:
                    JobReply.write(job, endedWith: outcome, usage: usage, requestID: waiter.requestID, into: &out)
                case .cancel:
                    Self.writeCancelReply(job, cancelled: end == .cancelled, requestID: waiter.requestID, into: &out)
                case .duplicate:
                    JobReply.write(job, endedWith: outcome, usage: usage, requestID: waiter.requestID, duplicate: true,
                                   into: &out)
                }
            }
        }
        for forgotten in table.retain(job, failed: end.isFailure, nowMs: job.endedAtUnixMs) {
            move(forgotten, to: .forgotten)
            forgetUniqueKey(of: forgotten)
        }
        idleTrim.jobEnded(idle: outstandingJobs == 0)
        laneFreed?(queue)
    }

    /// `cancel`'s reply: whether the job was cancelled, its state, and
    /// whether it had started (a job stopped while it ran may have done
    /// some or all of its work). Main thread, once the job's end (if any)
    /// is recorded.
    static func writeCancelReply(_ job: Job, cancelled: Bool, requestID: RequestID?, into out: inout [UInt8]) {
        Response.beginOK(id: requestID, into: &out)
        Response.field("job", job.id, into: &out)
        Response.field("cancelled", .bool(cancelled), into: &out)
        let state = job.visibleState()
        Response.field("state", state.rawValue, into: &out)
        Response.field("started", .bool(job.state.isEnded ? job.startedAtUnixMs != 0 : state == .running), into: &out)
        Response.end(into: &out)
    }
}

extension FinishedJob {
    /// The journal's record of a durable job's end.
    init(_ job: Job, end: Job.End) {
        self.init(id: job.id, state: end.protocolState.rawValue, resultJSON: (job.result ?? .object([])).serialized(),
                  finishedAt: job.endedAtUnixMs, clientUID: job.clientUID,
                  details: FinishedJob.Details(submittedAt: job.submittedAtUnixMs,
                                               startedAt: job.startedAtUnixMs == 0 ? nil : job.startedAtUnixMs,
                                               worker: job.worker.name, action: job.actionName,
                                               errorCode: job.error?.code.rawValue, errorMessage: job.error?.message,
                                               attempt: job.attempt, attemptErrors: job.retry.errors,
                                               uniqueKey: job.uniqueKey,
                                               links: .make(request: end.isFailure ? DurableJob(job) : nil,
                                                            retryOf: job.retryOf, retriedAs: job.retriedAs)))
    }
}
