import LoopRuntime

/// Jobs waiting for an instant (monotonic nanoseconds on the main loop's
/// clock), and the one timer on the main loop armed at the earliest: the
/// scheduler keeps one for delays (`delay_ms`, a retry's backoff) and one
/// for expiries. No polling, and nothing per job but its heap entry: a
/// million delayed jobs are a million entries here and one timer.
///
/// An indexed min-heap: each job knows its place (`Job.delaySlot` or
/// `Job.expirySlot`, by `kind`), so one that is cancelled or ends leaves in
/// O(log n). Equal instants come out in submission order. Main thread only.
final class JobDeadlines {
    /// Which of a job's slots this heap keeps.
    enum Kind {
        case delay
        case expiry
    }

    private struct Entry {
        let deadline: UInt64
        let job: Job
    }

    let kind: Kind
    private var heap: [Entry] = []
    private var timer: LoopTimer?

    init(_ kind: Kind) { self.kind = kind }

    /// Jobs waiting here.
    var count: Int { heap.count }

    /// The earliest deadline, if any.
    var earliest: UInt64? { heap.first?.deadline }

    /// Adds `job`, due at `deadline`; returns whether it is now the earliest.
    @discardableResult
    func insert(_ job: Job, deadline: UInt64) -> Bool {
        precondition(slot(of: job) < 0, "job \(job.id) is in the \(kind) heap already")
        heap.append(Entry(deadline: deadline, job: job))
        setSlot(of: job, heap.count - 1)
        siftUp(heap.count - 1)
        return slot(of: job) == 0
    }

    /// Takes `job` out (it started, ended or was cancelled); nothing if it is not in.
    func remove(_ job: Job) {
        let i = slot(of: job)
        guard i >= 0, i < heap.count, heap[i].job === job else { return }
        setSlot(of: job, -1)
        let last = heap.removeLast()
        guard i < heap.count else { return }
        heap[i] = last
        setSlot(of: last.job, i)
        siftDown(i)
        siftUp(i)
    }

    /// Takes out and returns the jobs due at `now`, earliest first.
    func takeDue(now: UInt64) -> [Job] {
        var due: [Job] = []
        while let first = heap.first, first.deadline <= now {
            due.append(first.job)
            remove(first.job)
        }
        return due
    }

    /// Arms the timer at the earliest deadline (creating it on `loop` the
    /// first time or after it fired), or lets it lapse if none is left.
    func arm(on loop: Loop, _ fire: @escaping @Sendable () -> Void) {
        guard let earliest else {
            timer?.invalidate()
            timer = nil
            return
        }
        let date = LoopInstant(nanoseconds: earliest)
        if let timer, timer.isValid {
            if timer.fireDate != date { timer.setFireDate(date) }
            return
        }
        let t = LoopTimer(fireDate: date) { _ in fire() }
        timer = t
        loop.add(t, forMode: .common)
    }

    // MARK: the heap

    private func slot(of job: Job) -> Int {
        Int(kind == .delay ? job.delaySlot : job.expirySlot)
    }

    private func setSlot(of job: Job, _ i: Int) {
        switch kind {
        case .delay: job.delaySlot = Int32(i)
        case .expiry: job.expirySlot = Int32(i)
        }
    }

    /// Whether entry `i` is due before entry `j`: by deadline, then by submission.
    private func precedes(_ i: Int, _ j: Int) -> Bool {
        let a = heap[i], b = heap[j]
        return a.deadline != b.deadline ? a.deadline < b.deadline : a.job.sequence < b.job.sequence
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(child, parent) else { break }
            swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && precedes(right, left) ? right : left
            guard precedes(child, parent) else { return }
            swapAt(child, parent)
            parent = child
        }
    }

    private func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        setSlot(of: heap[i].job, i)
        setSlot(of: heap[j].job, j)
    }
}
