import LoopRuntime
import Synchronization

/// Job ends reported by the workers and not yet recorded by the main thread,
/// in report order. Workers append; the main thread takes them all.
final class ReportedEnds: Sendable {
    private let ends = Locked<[(Job, ActionOutcome)]>([])
    /// Whether `ends` may hold something: lets the main thread skip the lock
    /// on every connection read while nothing was reported.
    private let nonEmpty = Atomic<Bool>(false)

    /// Appends a worker's ends. Any thread.
    func append(_ batch: [(Job, ActionOutcome)]) {
        ends.withLock { e in
            e.append(contentsOf: batch)
            nonEmpty.store(true, ordering: .releasing)
        }
    }

    /// Everything reported so far, oldest first, or nil if nothing was. Main thread.
    func takeAll() -> [(Job, ActionOutcome)]? {
        guard nonEmpty.load(ordering: .acquiring) else { return nil }
        return ends.withLock { e in
            nonEmpty.store(false, ordering: .relaxed)
            defer { e.removeAll(keepingCapacity: true) }
            return e
        }
    }
}
