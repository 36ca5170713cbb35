/// Every job the daemon knows: by id, in submission order, and with the
/// bound on how many ended jobs it keeps answering for (the oldest ended
/// job is forgotten first). Main thread only.
struct JobTable {
    /// How many ended jobs stay queryable.
    let retainedCapacity: Int
    private var byID: [String: Job] = [:]
    /// Submission order; forgotten jobs stay here until enough of them
    /// collect to be swept out at once.
    private var ordered: [Job] = []
    private var forgottenInOrder = 0
    /// The ids of the retained ended jobs, a ring: oldest at `oldest` once full.
    private var retained: [String] = []
    private var oldest = 0

    init(retainedCapacity: Int) {
        precondition(retainedCapacity > 0, "the job table keeps at least one ended job")
        self.retainedCapacity = retainedCapacity
    }

    subscript(id: String) -> Job? { byID[id] }

    /// Jobs known now, ended and retained ones included.
    var count: Int { byID.count }

    /// Adds a newly accepted job, the newest in submission order.
    mutating func insert(_ job: Job) {
        if forgottenInOrder >= 1024 && forgottenInOrder * 2 >= ordered.count { sweep() }
        assert(ordered.last.map { $0.sequence < job.sequence } ?? true, "jobs are inserted in submission order")
        byID[job.id] = job
        ordered.append(job)
    }

    /// Keeps an ended job queryable; returns the job it displaces, which
    /// the caller then moves to `forgotten` before the table is used again.
    mutating func retain(_ job: Job) -> Job? {
        guard retained.count == retainedCapacity else {
            retained.append(job.id)
            return nil
        }
        let evicted = retained[oldest]
        retained[oldest] = job.id
        oldest = (oldest + 1) % retainedCapacity
        guard let gone = byID.removeValue(forKey: evicted) else { return nil }
        forgottenInOrder += 1
        return gone
    }

    /// Drops forgotten jobs from the submission order: O(n), once per
    /// n/2 forgotten, so O(1) amortised per job.
    private mutating func sweep() {
        ordered.removeAll { $0.state == .forgotten }
        forgottenInOrder = 0
    }

    /// Up to `limit` known jobs that `matches`, in submission order, after
    /// the job of sequence `after` (from the start when nil); `more` says
    /// whether another matching job follows them.
    func page(after: UInt64?, limit: Int, matching matches: (Job) -> Bool) -> (jobs: [Job], more: Bool) {
        var index = 0
        if let after {
            // Binary search: the first job submitted after `after`.
            var high = ordered.count
            while index < high {
                let mid = (index + high) / 2
                if ordered[mid].sequence <= after { index = mid + 1 } else { high = mid }
            }
        }
        var jobs: [Job] = []
        while index < ordered.count {
            let job = ordered[index]
            index += 1
            guard job.state != .forgotten, matches(job) else { continue }
            if jobs.count == limit { return (jobs, true) }
            jobs.append(job)
        }
        return (jobs, false)
    }

    /// How many known jobs satisfy `predicate`.
    func count(where predicate: (Job) -> Bool) -> Int {
        var n = 0
        for job in ordered where job.state != .forgotten && predicate(job) { n += 1 }
        return n
    }
}
