import LoopdProtocol

// Priorities within a worker (docs/PROTOCOL.md, "Priority").
//
// A job's `priority` (unsigned 32-bit, lower first, default 2^31) orders it
// among the jobs waiting on its worker's lane; equal priorities keep the
// order in which the jobs reached the lane. Keyed jobs keep their order
// within the key: a job placed by `key` runs at no better a priority than
// the job of the same key and the same submitting uid submitted just before
// it, if that one has not started yet (`KeyOrder`), so it never overtakes it.

/// The priority each keyed job runs at, so that a key's jobs start in the
/// order they were submitted whatever priorities they ask for. Main thread only.
///
/// A key orders the jobs of the uid that submitted them, never another
/// user's: were keys shared, a user could submit a job of the worst
/// priority under the key someone else uses and so set the priority at
/// which that user's jobs run. (Placement by the key still hashes the key
/// alone, so the same key lands on the same worker for everyone.)
struct KeyOrder {
    /// A key as one uid uses it.
    private struct Scope: Hashable {
        let uid: UInt32
        let key: String
    }

    /// Per uid and key, the latest job placed by it that has not ended.
    private var latest: [Scope: Job] = [:]

    /// The priority `job` runs at: its own, or, for a keyed job whose
    /// key's previous job of the same uid has not started, the larger
    /// (later) of its own and that job's. Records `job` as its key's latest.
    mutating func runPriority(of job: Job) -> UInt32 {
        guard case .key(let key) = job.placement else { return job.priority }
        let scope = Scope(uid: job.clientUID, key: key)
        var priority = job.priority
        if let previous = latest[scope], !previous.state.isEnded, !previous.claim.isStarted {
            priority = max(priority, previous.runPriority)
        }
        latest[scope] = job
        return priority
    }

    /// Forgets `job` once it has ended (only if it is still its key's latest).
    mutating func ended(_ job: Job) {
        guard case .key(let key) = job.placement else { return }
        let scope = Scope(uid: job.clientUID, key: key)
        guard latest[scope] === job else { return }
        latest[scope] = nil
    }

    /// Keys with a job that has not ended (tests).
    var count: Int { latest.count }
}

/// A lane's jobs waiting to start, by priority: the lowest `runPriority`
/// first, and among equal priorities the one that reached the lane first.
///
/// While every waiting job has the same priority (the usual case: nobody
/// asked for one) the jobs sit in a plain FIFO (`ReadyQueue`), O(1) per
/// job as before priorities existed. A job of another priority moves them
/// all into a binary heap keyed by (priority, arrival), O(log n) per job,
/// until the lane has drained it. Jobs passed over for their mode stay, and
/// later admitted ones pass them, as in `ReadyQueue`.
///
/// Worker thread only.
struct JobReadyQueue {
    private struct Entry {
        let priority: UInt32
        let arrival: UInt64
        let job: Job

        @inline(__always)
        static func precedes(_ a: Entry, _ b: Entry) -> Bool {
            a.priority != b.priority ? a.priority < b.priority : a.arrival < b.arrival
        }
    }

    /// Every job here has `fifoPriority`; empty while `heap` is not.
    private var fifo = ReadyQueue<Job>()
    private var fifoPriority: UInt32 = SubmitRequest.defaultPriority
    /// A min-heap of `Entry`; empty while `fifo` is not.
    private var heap: [Entry] = []
    /// Arrivals counted, for the heap's tie-break.
    private var arrivals: UInt64 = 0

    var count: Int { fifo.count + heap.count }
    var isEmpty: Bool { fifo.isEmpty && heap.isEmpty }
    /// Whether the heap is in use (tests and benchmarks).
    var isOrderedByPriority: Bool { !heap.isEmpty }

    mutating func append(contentsOf jobs: [Job]) {
        for job in jobs { append(job) }
    }

    /// Jobs of one priority keep to the FIFO; the first of another moves
    /// the FIFO's jobs, in their order, into the heap, where it and every
    /// later job go.
    mutating func append(_ job: Job) {
        if heap.isEmpty {
            let priority = fifo.isEmpty ? job.runPriority : fifoPriority
            if job.runPriority == priority {
                fifoPriority = priority
                fifo.append(job)
                return
            }
            moveFIFOToHeap()
        }
        push(job)
    }

    /// Priorities differ from now on: the FIFO's jobs go first into the
    /// heap, in their order, then the new ones.
    private mutating func moveFIFOToHeap() {
        heap.reserveCapacity(fifo.count + 1)
        while let job = fifo.takeFirst(where: { _ in true }) { push(job) }
    }

    /// Removes and returns the first job by priority that `admits`; nil if none does.
    mutating func takeFirst(where admits: (Job) -> Bool) -> Job? {
        if heap.isEmpty { return fifo.takeFirst(where: admits) }
        if admits(heap[0].job) { return pop().job }
        // A job held for its mode is at the top: look further down, then
        // put back what was passed over.
        var passed: [Entry] = []
        var found: Job?
        while !heap.isEmpty {
            let entry = pop()
            if admits(entry.job) {
                found = entry.job
                break
            }
            passed.append(entry)
        }
        for entry in passed { push(entry) }
        return found
    }

    private mutating func push(_ job: Job) {
        push(Entry(priority: job.runPriority, arrival: arrivals, job: job))
        arrivals &+= 1
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Entry.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func pop() -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var parent = 0
        let n = heap.count
        while true {
            let left = 2 * parent + 1
            guard left < n else { break }
            let right = left + 1
            let child = right < n && Entry.precedes(heap[right], heap[left]) ? right : left
            guard Entry.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            parent = child
        }
        return top
    }
}
