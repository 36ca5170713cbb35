import LoopdProtocol

/// The known jobs by each value `jobs` filters on: owner (the isolation's
/// filter), worker, action and state, each a `SequenceSet` in submission
/// order. A filtered page walks the smallest set that holds every match
/// instead of the whole table, so jobs of other users, workers, actions or
/// states cost it nothing. Kept current by `JobScheduler.move` (the one
/// door for state changes) and by the table's insert and forget. Main
/// thread only.
struct JobIndex {
    /// The state a job is filed under: `Job.visibleState` as far as it
    /// changes only by a move. Queued and held share `waiting` (a mode
    /// switch turns one into the other without a move), and a job its lane
    /// has started but not yet reported is still `waiting` (the page adds
    /// each worker's running job for a `running` filter).
    enum Filed: Int, CaseIterable {
        case waiting, delayed, running, completed, failed, timedOut, cancelled, expired

        /// Where `job` is filed in `state`; nil once it is forgotten.
        init?(_ state: Job.State, of job: Job) {
            switch state {
            // No request sees a job while it is `accepted` (it leaves that
            // state in the call that accepted it), and a replay sets its
            // backoff only then: filed by state alone.
            case .accepted: self = .waiting
            // Its delay is known before it gets here and does not change while it waits.
            case .awaitingCommit: self = job.handOverDelayMs > 0 ? .delayed : .waiting
            case .delayed: self = .delayed
            case .queued: self = .waiting
            case .running: self = .running
            case .ended(let end):
                switch end {
                case .completed: self = .completed
                case .failed: self = .failed
                case .timedOut: self = .timedOut
                case .cancelled: self = .cancelled
                case .expired: self = .expired
                }
            case .forgotten: return nil
            }
        }

        /// Where the jobs a client sees in `state` are filed.
        static func holding(_ state: JobState) -> Filed {
            switch state {
            case .queued, .held: .waiting
            case .delayed: .delayed
            case .running: .running
            case .completed: .completed
            case .failed: .failed
            case .timedOut: .timedOut
            case .cancelled: .cancelled
            case .expired: .expired
            }
        }
    }

    private var byOwner = UIDTable<SequenceSet>()
    /// By kind (`JobKind.indexSlot`: one action on one worker), with each
    /// kind's worker and action: a worker's or an action's jobs are the
    /// union of its kinds' sets, and filing a job hashes no name.
    private var byKind: [SequenceSet] = []
    private var kinds: [(worker: String, action: String)] = []
    private var byState = [SequenceSet](repeating: SequenceSet(), count: Filed.allCases.count)

    /// Files a job the table just took in.
    mutating func insert(_ job: Job, as filed: Filed) {
        byOwner.change(job.clientUID, make: { SequenceSet() }, dropWhen: { $0.count == 0 }) { $0.insert(job.sequence) }
        let slot = job.kind.indexSlot
        while byKind.count <= slot {
            byKind.append(SequenceSet())
            kinds.append(("", ""))
        }
        if kinds[slot].worker.isEmpty { kinds[slot] = (job.worker.name, job.actionName) }
        byKind[slot].insert(job.sequence)
        byState[filed.rawValue].insert(job.sequence)
    }

    /// A job moved from `old` to `new` (nil: forgotten, out of every set).
    mutating func move(_ job: Job, from old: Filed, to new: Filed?) {
        if !byState[old.rawValue].remove(job.sequence) {
            assertionFailure("job \(job.id) was not filed as \(old)")
            // Out of whichever state set holds it, so no stale entry stays.
            for i in byState.indices where byState[i].remove(job.sequence) { break }
        }
        guard let new else {
            byOwner.change(job.clientUID, make: { SequenceSet() }, dropWhen: { $0.count == 0 }) { _ = $0.remove(job.sequence) }
            byKind[job.kind.indexSlot].remove(job.sequence)
            return
        }
        byState[new.rawValue].insert(job.sequence)
    }

    /// The sets a page may walk (the caller takes the smallest that holds
    /// every match): the owner's, a worker's or an action's (the sets of
    /// its kinds), a state's.
    func owner(_ uid: UInt32) -> SequenceSet? { byOwner[uid] }
    func worker(_ name: String) -> [SequenceSet] { kindSets { $0.worker == name } }
    func action(_ name: String) -> [SequenceSet] { kindSets { $0.action == name } }
    func state(_ filed: Filed) -> SequenceSet { byState[filed.rawValue] }

    /// The non-empty sets of the kinds that `matches`: a walk over the
    /// kinds (actions times workers, and those of past reloads), not the jobs.
    private func kindSets(_ matches: ((worker: String, action: String)) -> Bool) -> [SequenceSet] {
        kinds.indices.compactMap { byKind[$0].count > 0 && matches(kinds[$0]) ? byKind[$0] : nil }
    }
}
