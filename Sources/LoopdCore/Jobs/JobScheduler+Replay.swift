import LoopPlatform
import LoopdProtocol

/// Start-up: the durable jobs the journal holds unfinished. Main thread only.
extension JobScheduler {
    /// Queues again every durable job that was acknowledged and had not
    /// finished when the daemon last stopped (at-least-once), checked
    /// against the configuration in force now.
    /// A job that had failed attempts runs its next one (its attempts are in
    /// the record), after a backoff; the keys of the jobs the journal still
    /// answers for (`finished`) go back into the unique-key index.
    func replay(_ journal: JobJournal, finished: [FinishedJob] = []) {
        rebuildUniqueKeys(finished)
        // One submitter per owner, shared by that owner's jobs; consecutive
        // jobs mostly have the same owner.
        var submitters: [JobOwner: JobSubmitter] = [:]
        var lastSubmitter: JobSubmitter?
        reserveReplayedIDs(journal.pendingCount)
        journal.forEachPendingJob { d in
            let request = SubmitRequest(d)
            do throws(ProtocolError) {
                let owner = JobOwner(uid: d.clientUID, gid: d.clientGID, groups: d.clientGroups)
                let submitter: JobSubmitter
                if let last = lastSubmitter, last.owner == owner {
                    submitter = last
                } else {
                    submitter = submitters[owner] ?? JobSubmitter(owner)
                    submitters[owner] = submitter
                    lastSubmitter = submitter
                }
                let job = try accept(request, submitter: submitter, jobID: d.id, submittedAt: d.submittedAt,
                                     retryOf: d.retryOf)
                restoreAttempts(job, from: d)
                if timing.hasExpired(job) {
                    // Its deadline passed while loopd was down: it never runs.
                    expire(job)
                    return
                }
                handOver(job)
                log(.info, "replaying durable job \(d.id)", [(.jobID, d.id), (.action, d.action)])
            } catch {
                log(.error, "cannot replay durable job \(d.id): \(error)", [(.jobID, d.id)])
                guard let journalStore else { return }
                let now = unixMilliseconds()
                journalStore.keep(FinishedJob(
                    id: d.id, state: JobState.failed.rawValue,
                    resultJSON: JSON.object([("replay_error", .string(error.message))]).serialized(),
                    finishedAt: now, clientUID: d.clientUID,
                    details: FinishedJob.Details(submittedAt: d.submittedAt, startedAt: nil, worker: "", action: d.action,
                                                 errorCode: error.code.rawValue, errorMessage: error.message,
                                                 attempt: d.attemptsDone + 1, attemptErrors: d.attemptErrors,
                                                 uniqueKey: d.uniqueKey)))
            }
        }
        sealReplayedIDs()
    }
}

extension SubmitRequest {
    /// The request a durable job was accepted with, as its record keeps it.
    init(_ d: DurableJob) {
        self.init(action: d.action, args: d.args, placement: Placement(journalValue: d.placement), wait: false,
                  delayMs: d.delayMs, timeoutMs: d.timeoutMs, mode: d.mode, durable: true, priority: d.priority,
                  expiresInMs: d.expiresInMs)
        retries = d.retries
        retryBackoffMs = d.retryBackoffMs
        uniqueKey = d.uniqueKey
    }
}

extension Placement {
    /// How the journal spells a placement: "any", "worker:NAME" or "key:KEY".
    var journalValue: String {
        switch self {
        case .any: "any"
        case .worker(let w): "worker:\(w)"
        case .key(let k): "key:\(k)"
        }
    }

    init(journalValue v: String) {
        if v.hasPrefix("worker:") { self = .worker(String(v.dropFirst(7))) }
        else if v.hasPrefix("key:") { self = .key(String(v.dropFirst(4))) }
        else { self = .any }
    }
}

extension DurableJob {
    /// The journal's record of an accepted durable job.
    init(_ job: Job) {
        self.init(id: job.id, action: job.actionName, args: job.args,
                  placement: job.placement.journalValue, delayMs: job.delayMs,
                  timeoutMs: job.timeoutMs, mode: job.mode,
                  submittedAt: job.submittedAtUnixMs, clientUID: job.owner.uid, clientGID: job.owner.gid,
                  clientGroups: job.owner.groups, priority: job.priority, expiresInMs: job.expiresInMs)
        retries = job.retries
        retryBackoffMs = job.retryBackoffMs
        uniqueKey = job.uniqueKey
        attemptsDone = job.attempt - 1
        attemptErrors = job.retry.errors
        retryOf = job.retryOf
    }
}
