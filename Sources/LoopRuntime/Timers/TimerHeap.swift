/// A binary min-heap of timer entries ordered by (deadline, sequence), so
/// timers due at the same instant fire in the order they were created (R25).
/// Entries are never removed from the middle: a rescheduled or invalidated
/// timer leaves a stale entry that is dropped when it reaches the top.
struct TimerHeap {
    struct Entry {
        var deadline: LoopInstant
        var sequence: UInt64
        var generation: UInt64
        var timer: LoopTimer

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private(set) var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var top: Entry? { entries.first }
    /// The top entry's deadline, live or stale.
    var topDeadline: LoopInstant? { entries.first?.deadline }

    mutating func push(_ e: Entry) {
        entries.append(e)
        var i = entries.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard entries[i].precedes(entries[parent]) else { break }
            entries.swapAt(i, parent)
            i = parent
        }
    }

    @discardableResult
    mutating func pop() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let e = entries.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var best = i
            if l < entries.count && entries[l].precedes(entries[best]) { best = l }
            if r < entries.count && entries[r].precedes(entries[best]) { best = r }
            if best == i { break }
            entries.swapAt(i, best)
            i = best
        }
        return e
    }

    /// Drops stale entries from the top; returns the first live one.
    mutating func liveTop(isLive: (Entry) -> Bool) -> Entry? {
        while let t = top {
            if isLive(t) { return t }
            pop()
        }
        return nil
    }

    /// Every entry with a deadline at or before `limit`, in no order (a
    /// pruned walk: a node past the limit hides its whole subtree).
    func entries(notAfter limit: LoopInstant) -> [Entry] {
        var out: [Entry] = []
        var stack = entries.isEmpty ? [] : [0]
        while let i = stack.popLast() {
            let e = entries[i]
            guard e.deadline <= limit else { continue }
            out.append(e)
            let l = 2 * i + 1
            if l < entries.count { stack.append(l) }
            if l + 1 < entries.count { stack.append(l + 1) }
        }
        return out
    }

    /// Rebuilds the heap from its live entries.
    mutating func compact(isLive: (Entry) -> Bool) {
        let live = entries.filter(isLive)
        entries.removeAll(keepingCapacity: true)
        for e in live { push(e) }
    }
}
