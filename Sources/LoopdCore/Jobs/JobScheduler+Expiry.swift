import LoopPlatform
import LoopRuntime
import LoopdProtocol

// Expiry of waiting work (docs/PROTOCOL.md, "Expiry").
//
// A job submitted with `expires_in_ms` (or under `limits.default_expires_in_ms`)
// that has not started that long after its submission ends `expired`,
// whether it was queued, held for a mode or delayed. The deadline is wall
// time from the submission (`submitted_at + expires_in_ms`), so a durable
// job keeps it across a restart, and one whose deadline passed while loopd
// was down ends `expired` at its replay without running.
//
// No polling: the deadlines wait in a heap, and one timer on the main loop
// is armed at the earliest.

/// The jobs that may expire, by deadline (monotonic nanoseconds on the main
/// loop's clock), and the one timer armed at the earliest. An indexed
/// min-heap: a job that ends otherwise leaves it at once (`Job.expirySlot`).
/// Main thread only.
final class JobExpiries {
    private struct Entry {
        let deadline: UInt64
        let job: Job
    }

    private var heap: [Entry] = []
    private var timer: LoopTimer?

    /// Jobs waiting to expire.
    var count: Int { heap.count }

    /// The earliest deadline, if any.
    var earliest: UInt64? { heap.first?.deadline }

    func insert(_ job: Job, deadline: UInt64) {
        precondition(job.expirySlot < 0, "job \(job.id) is in the expiry heap already")
        heap.append(Entry(deadline: deadline, job: job))
        job.expirySlot = heap.count - 1
        siftUp(heap.count - 1)
    }

    /// Takes `job` out (it started or ended); nothing if it is not in.
    func remove(_ job: Job) {
        let slot = job.expirySlot
        guard slot >= 0, slot < heap.count, heap[slot].job === job else { return }
        job.expirySlot = -1
        let last = heap.removeLast()
        guard slot < heap.count else { return }
        heap[slot] = last
        last.job.expirySlot = slot
        siftDown(slot)
        siftUp(slot)
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
    /// first time or after it fired), or leaves it to lapse if none is left.
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

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
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
            let child = right < heap.count && heap[right].deadline < heap[left].deadline ? right : left
            guard heap[child].deadline < heap[parent].deadline else { return }
            swapAt(child, parent)
            parent = child
        }
    }

    private func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].job.expirySlot = i
        heap[j].job.expirySlot = j
    }
}

extension JobScheduler {
    /// The submit as it will run: the configured default expiry applied,
    /// and an expiry beyond `limits.max_expires_in_ms` refused.
    func withSchedulingLimits(_ s: SubmitRequest) throws(ProtocolError) -> SubmitRequest {
        var s = s
        if s.expiresInMs == nil, config.limits.defaultExpiresInMs > 0 { s.expiresInMs = config.limits.defaultExpiresInMs }
        if let ms = s.expiresInMs, ms > config.limits.maxExpiresInMs {
            throw ProtocolError(.badRequest,
                                "\"expires_in_ms\" must be at most \(config.limits.maxExpiresInMs) (limits.max_expires_in_ms), not \(ms)")
        }
        return s
    }

    /// A new job's place in the schedule: the priority it runs at, and its
    /// expiry, if it has one. Called once by `accept`.
    func schedule(_ job: Job) {
        job.runPriority = keyOrder.runPriority(of: job)
        guard let ms = job.request.expiresInMs else { return }
        let left = job.submittedAtUnixMs &+ ms &- unixMilliseconds()
        let now = loop.clock.now().nanoseconds
        expiries.insert(job, deadline: left <= 0 ? now : now &+ UInt64(left) * 1_000_000)
        if job.expirySlot == 0 { armExpiry() }  // the new earliest
    }

    /// Whether `job`'s expiry has passed already (a durable job replayed
    /// after its deadline).
    func hasExpired(_ job: Job) -> Bool {
        guard let ms = job.request.expiresInMs else { return false }
        return job.submittedAtUnixMs &+ ms <= unixMilliseconds()
    }

    /// A job's end, as the schedule sees it: it leaves the expiry heap and its key's order.
    func unschedule(_ job: Job) {
        // The timer is left as it is: if this was the earliest, it fires
        // once for nothing and re-arms (cheaper than moving it on every end).
        if job.expirySlot >= 0 { expiries.remove(job) }
        if case .key = job.request.placement { keyOrder.ended(job) }
    }

    /// Ends `job` `expired` if it has not started (nor ended): a waiting
    /// job, wherever it waits (the commit gate, its worker's delay timer,
    /// its lane's queue), loses its claim to the expiry, as to a cancel.
    func expire(_ job: Job) {
        switch job.state {
        case .ended, .running, .forgotten: return
        case .accepted, .awaitingCommit, .delayed, .queued: break
        }
        guard job.claim.cancel() else { return }  // its lane started it just now
        job.delayToken?.cancel()
        let ms = job.request.expiresInMs ?? 0
        end(job, .failure(ProtocolError(.expired, "job \(job.id) did not start within its \(ms) ms expiry"),
                          result: .object([])))
    }

    /// Ends every job whose deadline has come, then re-arms for the next.
    func expireDue() {
        for job in expiries.takeDue(now: loop.clock.now().nanoseconds) { expire(job) }
        armExpiry()
    }

    private func armExpiry() {
        expiries.arm(on: loop) { [unowned self] in expireDue() }
    }
}
