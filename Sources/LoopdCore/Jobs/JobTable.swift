/// Every job the daemon knows: by id, in submission order, and with the
/// bounds on the ended jobs it keeps answering for: how many, and how many
/// bytes they hold (`Job.retainedBytes`). Failures (failed, timed out,
/// expired) are kept apart, within bounds of their own and an age, so a
/// stream of successes does not push them out before anyone looked. In
/// each, the oldest ended job is forgotten first; the newest is always
/// kept. Main thread only.
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
    /// The ended jobs kept that did not fail: at most `retainedCapacity` of
    /// them, holding at most `retainedByteLimit` bytes (`limits.max_retained_bytes`).
    private var succeeded: RetainedRing
    /// The failures kept (`limits.retention_failed_*`); with a capacity of
    /// 0, failures are kept with the others.
    private var failures: RetainedRing
    /// How long a failure is kept at most, milliseconds.
    var failureRetentionMs: Int64 = .max
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
    /// `retain`'s list of the sequences a job displaces, kept between calls.
    private var displacedSequences: [UInt64] = []

    init(retainedCapacity: Int, retainedByteLimit: Int = .max, ids: JobIDCodec? = nil) {
        precondition(retainedCapacity > 0, "the job table keeps at least one ended job")
        succeeded = RetainedRing(capacity: retainedCapacity, byteLimit: retainedByteLimit)
        failures = RetainedRing(capacity: 0, byteLimit: 0, tracksMembers: true)
        self.ids = ids
    }

    /// How many ended jobs are retained now, and the bytes they are estimated to hold.
    var retainedCount: Int { succeeded.count + failures.count }
    var retainedBytes: Int { succeeded.bytes + failures.bytes }
    /// Of those, the failures.
    var retainedFailures: (count: Int, bytes: Int) { (failures.count, failures.bytes) }
    var retainedCapacity: Int { succeeded.capacity }
    /// `limits.max_retained_bytes`; a reload may change it, and the next ended job applies it.
    var retainedByteLimit: Int {
        get { succeeded.byteLimit }
        set { succeeded.byteLimit = newValue }
    }

    /// The failures' own bounds (`limits.retention_failed_jobs`,
    /// `retention_failed_bytes`, `retention_failed_seconds`); a reload
    /// applies them with the next ended job.
    mutating func keepFailures(count: Int, bytes: Int, forMs ms: Int64) {
        failures.capacity = count
        failures.byteLimit = bytes
        failureRetentionMs = ms
    }

    mutating func keepFailures(_ limits: DaemonConfig.Limits) {
        keepFailures(count: limits.retentionFailedJobs, bytes: limits.retentionFailedBytes,
                     forMs: limits.retentionFailedSeconds * 1000)
    }

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
        hasOtherIDs && otherIDs.sequence(of: id).flatMap(job(at:))?.id == id
    }

    /// Whether any replayed job's id is still known. Asked first by the
    /// scheduler for every new id: read alone, not through a call that
    /// would copy the whole table out of it.
    @inline(__always)
    var hasOtherIDs: Bool { !otherIDs.isEmpty }

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
    /// oldest of its kind, while there are more than its bound or they
    /// hold more bytes than theirs; failures also once older than their
    /// age, at `nowMs`), which the table no longer knows and the caller
    /// then forgets.
    mutating func retain(_ job: Job, failed: Bool = false, nowMs: Int64 = 0) -> [Job] {
        // The table's own list, taken and handed back emptied: a job that
        // displaces nothing (most, until the bound is reached) allocates nothing.
        var displaced: [UInt64] = []
        swap(&displaced, &displacedSequences)
        defer {
            displaced.removeAllKeepingCapacity(ifAtMost: 64)
            swap(&displaced, &displacedSequences)
        }
        if failed && failures.capacity > 0 {
            failures.add(job.sequence, bytes: job.retainedBytes, endedAtMs: nowMs, displacing: &displaced)
        } else {
            succeeded.add(job.sequence, bytes: job.retainedBytes, endedAtMs: nowMs, displacing: &displaced)
        }
        if failureRetentionMs < .max { failures.evict(endedBefore: nowMs - failureRetentionMs, into: &displaced) }
        return displaced.compactMap { forget($0) }
    }

    /// Forgets an ended job before its turn (`discard`); the caller moves it to `forgotten`.
    mutating func discard(_ job: Job) {
        if failures.holds(job.sequence) {
            failures.discard(job.sequence, bytes: job.retainedBytes)
        } else {
            succeeded.discard(job.sequence, bytes: job.retainedBytes)
        }
        _ = forget(job.sequence)
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

/// Ended jobs kept for `status`, in the order they ended, within a count and
/// a byte bound: the oldest goes first, the newest always stays. A job
/// discarded before its turn gives its bytes and its place back at once;
/// its entry is skipped when its turn comes.
private struct RetainedRing {
    var capacity: Int
    var byteLimit: Int
    private(set) var bytes = 0
    /// From `oldest` on; the entries before it are spent, and dropped once
    /// they are half of the array.
    private var entries: [(sequence: UInt64, bytes: Int, endedAtMs: Int64)] = []
    private var oldest = 0
    private var discarded: Set<UInt64> = []
    /// The sequences held, when asked for (the failures' ring: small, and
    /// `discard` must find which ring holds a job).
    private var members: Set<UInt64>?

    init(capacity: Int, byteLimit: Int, tracksMembers: Bool = false) {
        self.capacity = capacity
        self.byteLimit = byteLimit
        members = tracksMembers ? [] : nil
    }

    /// Whether `sequence` is held (only for a ring that tracks its members).
    func holds(_ sequence: UInt64) -> Bool { members?.contains(sequence) ?? false }

    var count: Int { entries.count - oldest - discarded.count }

    /// Adds the newest; appends the sequences it pushes out to `gone`.
    mutating func add(_ sequence: UInt64, bytes jobBytes: Int, endedAtMs: Int64, displacing gone: inout [UInt64]) {
        entries.append((sequence, jobBytes, endedAtMs))
        bytes += jobBytes
        members?.insert(sequence)
        while count > capacity || (bytes > byteLimit && count > 1) {
            if let sequence = popOldest() { gone.append(sequence) }
        }
    }

    /// Pushes out the entries that ended before `cutoff` (ended order is
    /// the ring's order, give or take a clock step), appending them to `gone`.
    mutating func evict(endedBefore cutoff: Int64, into gone: inout [UInt64]) {
        while oldest < entries.count && entries[oldest].endedAtMs < cutoff {
            if let sequence = popOldest() { gone.append(sequence) }
        }
    }

    /// Takes `sequence`, which it holds, out before its turn.
    mutating func discard(_ sequence: UInt64, bytes jobBytes: Int) {
        guard discarded.insert(sequence).inserted else { return }
        members?.remove(sequence)
        bytes -= jobBytes
    }

    /// The oldest live entry's sequence, removed; nil for a discarded one.
    private mutating func popOldest() -> UInt64? {
        let entry = entries[oldest]
        oldest += 1
        if oldest >= 1024 && oldest * 2 >= entries.count {
            entries.removeFirst(oldest)
            oldest = 0
        }
        if discarded.remove(entry.sequence) != nil { return nil }
        members?.remove(entry.sequence)
        bytes -= entry.bytes
        return entry.sequence
    }
}
