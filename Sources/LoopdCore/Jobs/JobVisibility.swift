import LoopdProtocol

/// Who sees which job (docs/OPERATIONS.md, "Sharing loopd between users").
///
/// A job is its submitter's: only its uid, and the administrators (root,
/// the daemon's own uid, `server.admin_users`, `server.admin_groups`), may
/// read, wait for or cancel it, or find it in `jobs`. To anyone else it
/// does not exist: a request that names it gets exactly the reply a
/// request naming an id never given out gets, the same code and the same
/// message, so no reply tells a user whether another's job exists. (A
/// `forbidden` for another's job and an `unknown_job` for a missing one
/// would answer that question for any id a user can guess or sees in
/// passing.) Main thread only.
extension JobScheduler {
    /// What a job id names for one requester.
    enum Sighting {
        /// A job the daemon holds, the requester's to see.
        case live(Job)
        /// A durable job that ended before a restart, the requester's to see.
        case finished(FinishedJob)
        /// Nothing the requester may know of: no such job, one forgotten
        /// past retention, or another user's.
        case none
    }

    /// The one refusal for an id that names nothing the requester may see.
    /// It does not repeat the id, so the reply is the same byte for byte
    /// whichever of the three reasons holds.
    static let unknownJob = ProtocolError(
        .unknownJob, "no such job: never submitted, forgotten after retention, or not one of yours")

    /// Whether `r` sees every user's jobs: an administrator, by the
    /// configuration in force.
    func seesEveryJob(_ r: Requester) -> Bool {
        config.mayAdminister(uid: r.owner.uid, gid: r.owner.gid, supplementaryGroups: r.owner.groups, daemonUID: daemonUID)
    }

    /// Whether `r` may see and manage a job submitted by `owner` (nil: the
    /// owner is unknown, a record older than loopd keeping it, which only
    /// administrators see).
    func mayManage(jobOf owner: UInt32?, _ r: Requester) -> Bool {
        owner == r.owner.uid || seesEveryJob(r)
    }

    /// What `jobID` names for `r`: the job table first, then the ends the
    /// stores retain.
    func sighting(_ jobID: String, for r: Requester) -> Sighting {
        if let job = table[jobID] {
            return mayManage(jobOf: job.clientUID, r) ? .live(job) : .none
        }
        for store in [journalStore, fleetStore] {
            if let finished = store?.finished(id: jobID) {
                return mayManage(jobOf: finished.clientUID, r) ? .finished(finished) : .none
            }
        }
        return .none
    }

    /// Answers a request whose job id names nothing `r` may see.
    func replyUnknownJob(id: RequestID?, to r: Requester) {
        r.sink.send { Response.error(id: id, Self.unknownJob, into: &$0) }
    }
}
