import LoopdProtocol

/// The `unique_key`s of the jobs the daemon knows, per submitting uid: a
/// key names one job of one user, so two users' keys never meet and a
/// duplicate submit can only ever return the submitter's own job. Main
/// thread only.
///
/// An entry lives while its job is known: until the job table forgets the
/// job, and for a durable job as long as the journal retains its end
/// (`journal.retention_seconds`). Entries of durable jobs past that are
/// swept out when the index has doubled since the last sweep.
struct UniqueKeys {
    private struct Key: Hashable {
        let uid: UInt32
        let key: String
    }

    private var jobs: [Key: String] = [:]
    /// The size at which the next insert sweeps stale entries.
    private var sweepAt = 1024

    var count: Int { jobs.count }

    /// The job `owner` submitted with `key`, if the index has one.
    func jobID(for key: String, owner: UInt32) -> String? { jobs[Key(uid: owner, key: key)] }

    /// Records `jobID` under `key` of `owner`; `isKnown` judges old entries
    /// when the index has grown enough to sweep.
    mutating func insert(_ key: String, owner: UInt32, jobID: String, isKnown: (String) -> Bool = { _ in true }) {
        if jobs.count >= sweepAt {
            jobs = jobs.filter { isKnown($0.value) }
            sweepAt = max(1024, jobs.count * 2)
        }
        jobs[Key(uid: owner, key: key)] = jobID
    }

    /// Removes `key` of `owner` if it still names `jobID`.
    mutating func remove(_ key: String, owner: UInt32, jobID: String) {
        let k = Key(uid: owner, key: key)
        if jobs[k] == jobID { jobs[k] = nil }
    }
}

/// Unique jobs: a submit with a `unique_key` the submitter already used for
/// a job the daemon knows returns that job. Main thread only.
extension JobScheduler {
    /// Whether the daemon still answers for `jobID`: the job table knows
    /// it, or the journal retains its end.
    func knowsJob(_ jobID: String) -> Bool {
        table[jobID] != nil || journal?.finishedStatus(id: jobID) != nil
    }

    /// Records a new job's key.
    func registerUniqueKey(_ key: String, owner: UInt32, jobID: String) {
        uniqueKeys.insert(key, owner: owner, jobID: jobID) { [unowned self] in knowsJob($0) }
    }

    /// Answers a submit whose `unique_key` names a known job of the same
    /// uid, and returns true; false when the submit makes a new job.
    /// Without `wait`: the job's id and current state. With it: the job's
    /// end, now if it has ended, else when it does (like a `wait`). Both
    /// with `"duplicate":true`.
    func answerDuplicate(_ s: SubmitRequest, id: RequestID?, from r: Requester) -> Bool {
        guard let key = s.uniqueKey, let jobID = uniqueKeys.jobID(for: key, owner: r.owner.uid) else { return false }
        if let job = table[jobID] {
            if !s.wait {
                r.sink.send { JobReply.write(job, state: job.visibleState(), result: nil, error: nil, requestID: id,
                                             duplicate: true, into: &$0) }
            } else if job.state.isEnded {
                r.sink.send { EndedJobView(job).writeReply(requestID: id, duplicate: true, into: &$0) }
            } else {
                do {
                    try checkWaitQuota(uid: r.owner.uid)
                    _ = waiters.add(.duplicate, on: jobID, sink: r.sink, requestID: id, uid: r.owner.uid)
                } catch {
                    r.sink.send { Response.error(id: id, error, into: &$0) }
                }
            }
            return true
        }
        if let finished = journal?.finishedStatus(id: jobID) {
            if s.wait {
                r.sink.send { EndedJobView(finished).writeReply(requestID: id, duplicate: true, into: &$0) }
            } else {
                var fields: [(String, JSON)] = [("job", .string(finished.id)), ("state", .string(finished.state))]
                if let worker = finished.details?.worker, !worker.isEmpty { fields.append(("worker", .string(worker))) }
                fields.append(("duplicate", true))
                r.sink.send { Response.ok(id: id, fields, into: &$0) }
            }
            return true
        }
        uniqueKeys.remove(key, owner: r.owner.uid, jobID: jobID)
        return false
    }

    /// The job table forgot `job`: its key goes too, unless the journal
    /// still answers for it.
    func forgetUniqueKey(of job: Job) {
        guard let key = job.uniqueKey else { return }
        if job.durable, journal?.finishedStatus(id: job.id) != nil { return }
        uniqueKeys.remove(key, owner: job.clientUID, jobID: job.id)
    }

    /// At start: the keys of the durable jobs whose ends the journal retains.
    func rebuildUniqueKeys(_ finished: [FinishedJob]) {
        for f in finished {
            guard let key = f.details?.uniqueKey, let uid = f.clientUID else { continue }
            registerUniqueKey(key, owner: uid, jobID: f.id)
        }
    }
}
