/// The journal's committed live state in memory: what a replay of the log
/// yields, and what compaction writes out. It always equals the file (less
/// expired records); uncommitted appends are not in it.
///
/// Loop thread only (owned by `JobJournal`).
struct JournalState {
    private struct Pending {
        var job: DurableJob
        var size: Int
    }

    private struct Finished {
        var job: FinishedJob
        /// Its bytes in the file.
        var size: Int
        /// Its estimated bytes in memory (`FinishedJob.retainedBytes`).
        var memory: Int
    }

    /// Pending jobs in submission order (a replay re-queues them in the
    /// order they came); nil where one has finished since. The holes are
    /// swept out once they are half the array, so O(1) amortised per job.
    private var pendingOrder: [Pending?] = []
    private var pendingHoles = 0
    /// Where each pending job is in `pendingOrder`.
    private var pendingIndex: [String: Int] = [:]
    private var finished: [String: Finished] = [:]
    /// Finish order for expiry, of the jobs that did not fail and of the
    /// failures (kept longer): oldest at the head. Entries whose job was
    /// replaced or removed since are skipped when they reach the head.
    private var expiry = ExpiryQueue()
    private var failedExpiry = ExpiryQueue()

    /// Bytes the live records occupy when written out: what compaction would
    /// keep. Compared with the file size to decide whether to compact.
    private(set) var liveBytes = 0

    /// The estimated memory the retained finished jobs hold, in all and
    /// per submitting uid (`quotas.max_durable_retained_bytes`); a record
    /// without a uid counts in the total only.
    private(set) var retainedMemory = 0
    private var retainedMemoryByUID: [UInt32: Int] = [:]
    /// `limits.max_retained_bytes`: past it the oldest finished jobs are
    /// forgotten, as the job table forgets non-durable ones (the newest is
    /// always kept), and compaction leaves their records out of the file.
    var retainedByteLimit = Int.max

    init(retainedByteLimit: Int = .max) {
        self.retainedByteLimit = retainedByteLimit
    }

    /// The estimated memory of `uid`'s retained finished jobs.
    func retainedMemory(of uid: UInt32) -> Int { retainedMemoryByUID[uid] ?? 0 }

    var pendingCount: Int { pendingIndex.count }
    var finishedCount: Int { finished.count }

    /// Makes room for `count` more pending jobs at once (a recovery that
    /// knows how many submit records it is about to apply).
    mutating func reservePending(_ count: Int) {
        pendingOrder.reserveCapacity(pendingOrder.count + count)
        pendingIndex.reserveCapacity(pendingIndex.count + count)
    }

    /// Applies one committed (or recovered) record of `size` bytes.
    mutating func apply(_ record: JournalRecord, size: Int) {
        switch record {
        case let .submitted(job):
            // A later record wins: a re-submitted id is pending again, last in order.
            if !finished.isEmpty { removeFinished(job.id) }
            if let i = pendingIndex.updateValue(pendingOrder.count, forKey: job.id) { clearPending(at: i) }
            pendingOrder.append(Pending(job: job, size: size))
            liveBytes += size
        case let .discarded(id):
            removeFinished(id)
        case let .finished(job):
            // The submit record is dead once its finish is durable.
            removePending(job.id)
            removeFinished(job.id)
            let memory = job.retainedBytes
            finished[job.id] = Finished(job: job, size: size, memory: memory)
            if job.isFailure { failedExpiry.append(job) } else { expiry.append(job) }
            liveBytes += size
            countMemory(memory, of: job.clientUID)
            if retainedMemory > retainedByteLimit { forgetOldest() }
        }
    }

    /// Takes the finished job `id` out, if it is retained.
    private mutating func removeFinished(_ id: String) {
        guard let old = finished.removeValue(forKey: id) else { return }
        liveBytes -= old.size
        countMemory(-old.memory, of: old.job.clientUID)
    }

    private mutating func countMemory(_ delta: Int, of uid: UInt32?) {
        retainedMemory += delta
        guard let uid else { return }
        let now = (retainedMemoryByUID[uid] ?? 0) + delta
        retainedMemoryByUID[uid] = now == 0 ? nil : now
    }

    /// Forgets the oldest finished jobs while they hold more than
    /// `retainedByteLimit`, keeping at least the newest: those that did not
    /// fail first, then failures. O(1) amortised: each expiry entry is
    /// passed once.
    private mutating func forgetOldest() {
        while retainedMemory > retainedByteLimit && finished.count > 1 {
            guard let entry = expiry.pop() ?? failedExpiry.pop() else { break }
            if let current = finished[entry.id], current.job.finishedAt == entry.finishedAt {
                removeFinished(entry.id)
            }
        }
    }



    /// Takes the pending job `id` out, if it is pending.
    private mutating func removePending(_ id: String) {
        guard let i = pendingIndex.removeValue(forKey: id) else { return }
        clearPending(at: i)
    }

    /// Leaves a hole where a pending job was (its index entry is gone or
    /// points elsewhere now).
    private mutating func clearPending(at i: Int) {
        guard let old = pendingOrder[i] else { return }
        liveBytes -= old.size
        pendingOrder[i] = nil
        pendingHoles += 1
        if pendingHoles >= 1024 && pendingHoles * 2 >= pendingOrder.count { sweepPending() }
    }

    /// Drops the holes from `pendingOrder` and re-indexes what is left.
    private mutating func sweepPending() {
        var kept = 0
        for i in pendingOrder.indices {
            guard let p = pendingOrder[i] else { continue }
            if kept != i { pendingOrder[kept] = p }
            pendingIndex[p.job.id] = kept
            kept += 1
        }
        pendingOrder.removeLast(pendingOrder.count - kept)
        pendingHoles = 0
        // Emptied after a peak: give the storage back.
        if pendingOrder.isEmpty && pendingOrder.capacity > 1024 {
            pendingOrder = []
            pendingIndex = [:]
        }
    }

    /// Forgets finished jobs that finished before `cutoff` (Unix ms), and
    /// failures that finished before `failedCutoff` (nil: `cutoff`).
    /// Amortised O(1) per job; jobs finishing out of clock order (a clock
    /// step) expire no earlier than their queue predecessors.
    mutating func expire(finishedBefore cutoff: Int64, failuresBefore failedCutoff: Int64? = nil) {
        for (queue, before) in [(\JournalState.expiry, cutoff), (\JournalState.failedExpiry, failedCutoff ?? cutoff)] {
            while let entry = self[keyPath: queue].pop(finishedBefore: before) {
                if let current = finished[entry.id], current.job.finishedAt == entry.finishedAt {
                    removeFinished(entry.id)
                }
            }
        }
        // Emptied after a peak: give the storage back rather than keep the
        // peak's capacity for the daemon's lifetime.
        if finished.isEmpty && finished.capacity > 1024 { finished = [:] }
    }

    /// When the oldest retained finish passes its retention (Unix ms); nil
    /// if none is retained. May name a finish since replaced: expiry skips those.
    func nextExpiry(retentionMs: Int64, failureRetentionMs: Int64) -> Int64? {
        [expiry.oldest.map { $0 + retentionMs }, failedExpiry.oldest.map { $0 + failureRetentionMs }].compactMap { $0 }.min()
    }

    /// Whether no finish is retained.
    var retainsNoFinish: Bool { finished.isEmpty }

    /// The finished job `id`, if retained.
    func finishedJob(_ id: String) -> FinishedJob? {
        finished[id]?.job
    }

    /// Pending jobs in submission order.
    func pendingJobs() -> [DurableJob] {
        var jobs: [DurableJob] = []
        jobs.reserveCapacity(pendingIndex.count)
        forEachPending { jobs.append($0) }
        return jobs
    }

    /// Calls `body` with each pending job, in submission order.
    func forEachPending(_ body: (DurableJob) -> Void) {
        for case let p? in pendingOrder { body(p.job) }
    }

    /// Retained finished jobs in finish order (each queue's order, merged).
    func finishedJobs() -> [FinishedJob] {
        var seen = Set<String>()
        var jobs: [FinishedJob] = []
        // Walk newest first so a job finished twice is listed at its last
        // finish, then reverse into oldest-first order.
        for entry in ExpiryQueue.merged(expiry, failedExpiry).reversed() {
            guard let current = finished[entry.id], current.job.finishedAt == entry.finishedAt,
                  seen.insert(entry.id).inserted else { continue }
            jobs.append(current.job)
        }
        return jobs.reversed()
    }
}

/// Finished jobs in the order they finished, oldest first, for expiry.
private struct ExpiryQueue {
    private var entries: [(id: String, finishedAt: Int64)] = []
    private var head = 0

    var oldest: Int64? { head < entries.count ? entries[head].finishedAt : nil }

    mutating func append(_ job: FinishedJob) { entries.append((job.id, job.finishedAt)) }

    /// The oldest entry, removed (only if it finished before `cutoff`, when given).
    mutating func pop(finishedBefore cutoff: Int64 = .max) -> (id: String, finishedAt: Int64)? {
        guard head < entries.count, entries[head].finishedAt < cutoff else { return nil }
        let entry = entries[head]
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.capacity <= 1024)
            head = 0
        } else if head > 1024 && head * 2 > entries.count {
            // Drop the consumed prefix once it dominates, keeping pops O(1) amortised.
            entries.removeFirst(head)
            head = 0
        }
        return entry
    }

    /// The entries of both, by finish time (each is already in that order).
    static func merged(_ a: ExpiryQueue, _ b: ExpiryQueue) -> [(id: String, finishedAt: Int64)] {
        var out: [(id: String, finishedAt: Int64)] = []
        var i = a.head, j = b.head
        while i < a.entries.count || j < b.entries.count {
            if j == b.entries.count || (i < a.entries.count && a.entries[i].finishedAt <= b.entries[j].finishedAt) {
                out.append(a.entries[i])
                i += 1
            } else {
                out.append(b.entries[j])
                j += 1
            }
        }
        return out
    }
}
