/// Every job the daemon knows: by id, in submission order, and with the
/// bounds on the ended jobs it keeps answering for: how many, and how many
/// bytes they hold (`Job.retainedBytes`). The oldest ended job is
/// forgotten first; the newest is always kept. Main thread only.
///
/// The submission order is the index: an id this run gave out deciphers
/// to its sequence (`JobIDCodec`), so finding its job is a binary search;
/// the ids that do not (a replayed durable job keeps the id of the run that
/// accepted it) are kept sorted beside it (`OtherJobIDs`). A queued job
/// costs the table one 16-byte slot.
///
/// Forgetting a job touches only that job: the submission order keeps each
/// job's sequence beside it, so finding and clearing its slot, and sweeping
/// cleared slots out, never reads a job that has long left the cache.
struct JobTable {
    /// How many ended jobs stay queryable.
    let retainedCapacity: Int
    /// How many bytes of ended jobs stay queryable (`limits.max_retained_bytes`;
    /// a reload may change it, and the next ended job applies it).
    var retainedByteLimit: Int
    /// The estimated bytes the retained ended jobs hold now.
    private(set) var retainedBytes = 0
    /// Deciphers this run's ids (`JobIDGenerator.codec`); nil: every id
    /// goes in `otherIDs`.
    private let ids: JobIDCodec?
    /// The jobs whose id does not name their sequence.
    private var otherIDs = OtherJobIDs()
    /// Jobs known now.
    private(set) var count = 0
    /// The known jobs by owner, worker, action and state, for `jobs`.
    private(set) var index = JobIndex()

    /// A place in the submission order; `job` is nil once it is forgotten
    /// (a sweep tests the reference, and never reads the job).
    private struct Slot {
        let sequence: UInt64
        var job: Job?
    }

    /// Submission order, sorted by sequence; cleared slots stay until
    /// enough of them collect to be swept out at once.
    private var order: [Slot] = []
    private var cleared = 0
    /// Where the last forgotten job's slot was: jobs are forgotten in about
    /// the order they were submitted, so the next one is usually just after.
    private var clearHint = 0
    /// The retained ended jobs, oldest first from `oldest`: their
    /// sequences and estimated bytes. The slots before `oldest` are spent, and dropped
    /// once they are half of the array.
    private var retained: [(sequence: UInt64, bytes: Int)] = []
    private var oldest = 0

    init(retainedCapacity: Int, retainedByteLimit: Int = .max, ids: JobIDCodec? = nil) {
        precondition(retainedCapacity > 0, "the job table keeps at least one ended job")
        self.retainedCapacity = retainedCapacity
        self.retainedByteLimit = retainedByteLimit
        self.ids = ids
    }

    /// How many ended jobs are retained now.
    var retainedCount: Int { retained.count - oldest }

    /// The job known by `id`. An id that deciphers to a sequence of this
    /// run is looked for there first; one made with another run's key
    /// deciphers to noise, which now and then names a sequence of this run
    /// by chance, so the job found there must carry the id, and otherwise
    /// the replayed ids are asked.
    subscript(id: String) -> Job? {
        if let sequence = generatedSequence(id), let job = job(at: sequence), job.id == id { return job }
        guard let sequence = otherIDs.sequence(of: id), let job = job(at: sequence), job.id == id else { return nil }
        return job
    }

    /// Whether `id` is one of the replayed jobs' ids still known: a new id
    /// of this run must not be.
    func hasOtherID(_ id: String) -> Bool {
        !otherIDs.isEmpty && otherIDs.sequence(of: id).flatMap(job(at:))?.id == id
    }

    /// The known job with `sequence`, if any.
    private func job(at sequence: UInt64) -> Job? {
        let i = firstSlot(after: sequence - 1)
        guard i < order.count, order[i].sequence == sequence else { return nil }
        return order[i].job
    }

    /// The sequence an id of this run's making names, if it is one.
    private func generatedSequence(_ id: String) -> UInt64? {
        guard let sequence = ids?.sequence(ofID: id), sequence > 0 else { return nil }
        return sequence
    }

    /// Makes room for `count` more jobs whose ids are not this run's (a
    /// replay of that many durable jobs).
    mutating func reserve(otherIDs count: Int) {
        otherIDs.reserve(count)
        order.reserveCapacity(order.count + count)
    }

    /// The replay has inserted its jobs: their ids are indexed from now on.
    mutating func sealOtherIDs() {
        otherIDs.seal()
    }

    /// Adds a newly accepted job, the newest in submission order.
    /// `generatedID`: its id is this run's for its sequence (`JobIDGenerator`).
    mutating func insert(_ job: Job, generatedID: Bool = false) {
        assert(order.last.map { $0.sequence < job.sequence } ?? true, "jobs are inserted in submission order")
        assert(!generatedID || generatedSequence(job.id) == job.sequence, "job \(job.id) does not name sequence \(job.sequence)")
        if cleared >= 1024 && cleared * 2 >= order.count { sweep() }
        // A replayed id that this run's key happens to decipher to the
        // job's own sequence is found without the index.
        if !generatedID && generatedSequence(job.id) != job.sequence { otherIDs.insert(job.id, sequence: job.sequence) }
        order.append(Slot(sequence: job.sequence, job: job))
        count += 1
        if let filed = JobIndex.Filed(job.state, of: job) { index.insert(job, as: filed) }
    }

    /// A known job moved between the states the index files it under
    /// (`JobScheduler.move`); `new` nil: it was forgotten.
    mutating func refile(_ job: Job, from old: JobIndex.Filed, to new: JobIndex.Filed?) {
        index.move(job, from: old, to: new)
    }

    /// Keeps an ended job queryable; returns the jobs it displaces (the
    /// oldest retained, while there are more than `retainedCapacity` or
    /// they hold more than `retainedByteLimit`), which the table no longer
    /// knows and the caller then forgets.
    mutating func retain(_ job: Job) -> [Job] {
        let bytes = job.retainedBytes
        retained.append((job.sequence, bytes))
        retainedBytes += bytes
        var gone: [Job] = []
        while retainedCount > retainedCapacity || (retainedBytes > retainedByteLimit && retainedCount > 1) {
            let (evicted, evictedBytes) = retained[oldest]
            oldest += 1
            retainedBytes -= evictedBytes
            if let job = forget(evicted) { gone.append(job) }
        }
        if oldest >= 1024 && oldest * 2 >= retained.count {
            retained.removeFirst(oldest)
            oldest = 0
        }
        return gone
    }

    /// Removes the ended job of `sequence` from the index and clears its slot.
    private mutating func forget(_ sequence: UInt64) -> Job? {
        let i = slot(of: sequence)
        guard let gone = order[i].job else { return nil }
        if !otherIDs.isEmpty && generatedSequence(gone.id) != sequence { otherIDs.removed(gone.id) }
        order[i].job = nil
        count -= 1
        cleared += 1
        clearHint = i + 1
        return gone
    }

    /// The slot of the job with `sequence`: a few steps on from the last
    /// cleared slot, or by binary search.
    private func slot(of sequence: UInt64) -> Int {
        var i = clearHint
        while i < min(order.count, clearHint + 16) {
            if order[i].sequence == sequence { return i }
            i += 1
        }
        let found = firstSlot(after: sequence - 1)
        precondition(found < order.count && order[found].sequence == sequence, "job \(sequence) is not in the table")
        return found
    }

    /// The index of the first slot with a sequence above `after`.
    private func firstSlot(after: UInt64) -> Int {
        var low = 0, high = order.count
        while low < high {
            let mid = (low + high) / 2
            if order[mid].sequence <= after { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Drops cleared slots from the submission order: O(n), once per n/2
    /// forgotten jobs, so O(1) amortised per job; reads no job.
    private mutating func sweep() {
        var kept = 0
        for i in order.indices where order[i].job != nil {
            if kept != i { order.swapAt(kept, i) }
            kept += 1
        }
        order.removeLast(order.count - kept)
        cleared = 0
        clearHint = 0
    }

    /// Up to `limit` known jobs that `matches`, in submission order, after
    /// the job of sequence `after` (from the start when nil); `more` says
    /// whether another matching job follows them.
    func page(after: UInt64?, limit: Int, matching matches: (Job) -> Bool) -> (jobs: [Job], more: Bool) {
        var jobs: [Job] = []
        for slot in order[(after.map(firstSlot) ?? 0)...] {
            guard let job = slot.job, matches(job) else { continue }
            if jobs.count == limit { return (jobs, true) }
            jobs.append(job)
        }
        return (jobs, false)
    }

    /// Like `page(after:limit:matching:)`, walking only the members of
    /// `sources` (merged, ascending; a sequence in several is visited
    /// once) instead of every known job: each must hold every job that
    /// can match. `visited` counts the jobs looked at, the cost of the page.
    func page(after: UInt64?, limit: Int, walking sources: [SequenceSet.Members],
              matching matches: (Job) -> Bool) -> (jobs: [Job], more: Bool, visited: Int) {
        var sources = sources
        var heads = sources.indices.map { sources[$0].pop() }
        var jobs: [Job] = []
        var visited = 0
        var last: UInt64?
        while true {
            var pick = -1, sequence = UInt64.max
            for i in heads.indices {
                if let h = heads[i], pick < 0 || h < sequence { (pick, sequence) = (i, h) }
            }
            guard pick >= 0 else { return (jobs, false, visited) }
            heads[pick] = sources[pick].pop()
            if sequence == last { continue }
            last = sequence
            visited += 1
            guard let job = job(at: sequence), matches(job) else { continue }
            if jobs.count == limit { return (jobs, true, visited) }
            jobs.append(job)
        }
    }

    /// Calls `body` with every known job, in submission order.
    func forEach(_ body: (Job) -> Void) {
        for slot in order { if let job = slot.job { body(job) } }
    }

    /// How many known jobs satisfy `predicate`.
    func count(where predicate: (Job) -> Bool) -> Int {
        var n = 0
        for slot in order { if let job = slot.job, predicate(job) { n += 1 } }
        return n
    }
}
