/// The journal's committed live state in memory: what a replay of the log
/// yields, and what compaction writes out. It always equals the file (less
/// expired records); uncommitted appends are not in it.
///
/// Loop thread only (owned by `JobJournal`).
struct JournalState {
    private struct Pending {
        var job: DurableJob
        var size: Int
        /// Submission order, so a replay re-queues jobs in the order they came.
        var sequence: UInt64
    }

    private struct Finished {
        var job: FinishedJob
        var size: Int
    }

    private var pending: [String: Pending] = [:]
    private var finished: [String: Finished] = [:]
    /// Finish order for expiry: oldest at `expiryHead`. Entries whose job was
    /// replaced or removed since are skipped when they reach the head.
    private var expiryQueue: [(id: String, finishedAt: Int64)] = []
    private var expiryHead = 0
    private var nextSequence: UInt64 = 0

    /// Bytes the live records occupy when written out: what compaction would
    /// keep. Compared with the file size to decide whether to compact.
    private(set) var liveBytes = 0

    var pendingCount: Int { pending.count }
    var finishedCount: Int { finished.count }

    /// Applies one committed (or recovered) record of `size` bytes.
    mutating func apply(_ record: JournalRecord, size: Int) {
        switch record {
        case let .submitted(job):
            // A later record wins: a re-submitted id is pending again.
            if let old = finished.removeValue(forKey: job.id) { liveBytes -= old.size }
            if let old = pending[job.id] { liveBytes -= old.size }
            pending[job.id] = Pending(job: job, size: size, sequence: nextSequence)
            nextSequence += 1
            liveBytes += size
        case let .finished(job):
            // The submit record is dead once its finish is durable.
            if let old = pending.removeValue(forKey: job.id) { liveBytes -= old.size }
            if let old = finished[job.id] { liveBytes -= old.size }
            finished[job.id] = Finished(job: job, size: size)
            expiryQueue.append((job.id, job.finishedAt))
            liveBytes += size
        }
    }

    /// Forgets finished jobs that finished before `cutoff` (Unix ms).
    /// Amortised O(1) per job; jobs finishing out of clock order (a clock
    /// step) expire no earlier than their queue predecessors.
    mutating func expire(finishedBefore cutoff: Int64) {
        while expiryHead < expiryQueue.count, expiryQueue[expiryHead].finishedAt < cutoff {
            let entry = expiryQueue[expiryHead]
            expiryHead += 1
            if let current = finished[entry.id], current.job.finishedAt == entry.finishedAt {
                finished[entry.id] = nil
                liveBytes -= current.size
            }
        }
        // Emptied after a peak: give the storage back rather than keep the
        // peak's capacity for the daemon's lifetime.
        if finished.isEmpty && finished.capacity > 1024 { finished = [:] }
        if pending.isEmpty && pending.capacity > 1024 { pending = [:] }
        if expiryHead == expiryQueue.count {
            expiryQueue.removeAll(keepingCapacity: expiryQueue.capacity <= 1024)
            expiryHead = 0
        } else if expiryHead > 1024 && expiryHead * 2 > expiryQueue.count {
            // Drop the consumed prefix once it dominates, keeping pops O(1) amortised.
            expiryQueue.removeFirst(expiryHead)
            expiryHead = 0
        }
    }

    /// When the oldest retained finish happened (Unix ms); nil if none is
    /// retained. May name a finish since replaced: expiry skips those.
    var oldestFinishAt: Int64? {
        expiryHead < expiryQueue.count ? expiryQueue[expiryHead].finishedAt : nil
    }

    /// The finished job `id`, if retained.
    func finishedJob(_ id: String) -> FinishedJob? {
        finished[id]?.job
    }

    /// Pending jobs in submission order.
    func pendingJobs() -> [DurableJob] {
        pending.values.sorted { $0.sequence < $1.sequence }.map(\.job)
    }

    /// Retained finished jobs in finish order (queue order).
    func finishedJobs() -> [FinishedJob] {
        var seen = Set<String>()
        var jobs: [FinishedJob] = []
        // Walk newest first so a job finished twice is listed at its last
        // finish, then reverse into oldest-first order.
        for entry in expiryQueue[expiryHead...].reversed() {
            guard let current = finished[entry.id], current.job.finishedAt == entry.finishedAt,
                  seen.insert(entry.id).inserted else { continue }
            jobs.append(current.job)
        }
        return jobs.reversed()
    }
}
