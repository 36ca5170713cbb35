import LoopPlatform

/// A set of job sequences in ascending order: one filter value's jobs for
/// `jobs` (`JobIndex`). Insertion is an append for a job newer than every
/// member (the usual case: jobs enter a state, or the table, about in
/// submission order), else a binary search and an insert; removal is a
/// binary search that marks the slot, and marked slots are swept out once
/// they are half of the array, so each costs O(log n) amortised. Finding
/// the members after a cursor is a binary search. Main thread only.
struct SequenceSet {
    /// Members ascending; a slot whose top bit is set was removed.
    private var items: [UInt64] = []
    /// Slots before `head` are spent (removed from the front).
    private var head = 0
    /// Marked slots at or after `head`.
    private var marked = 0
    /// Members now.
    private(set) var count = 0

    private static let removedBit: UInt64 = 1 << 63

    /// Adds `sequence`, which must not be a member.
    mutating func insert(_ sequence: UInt64) {
        count += 1
        if head == items.count || items[items.count - 1] & ~Self.removedBit < sequence {
            items.append(sequence)
            return
        }
        let i = firstSlot(notBelow: sequence)
        if i < items.count && items[i] & ~Self.removedBit == sequence {
            assert(items[i] & Self.removedBit != 0, "sequence \(sequence) is a member already")
            items[i] = sequence  // its marked slot, revived
            marked -= 1
            return
        }
        items.insert(sequence, at: i)
    }

    /// Adds `sequence` unless it is a member already.
    mutating func insertIfAbsent(_ sequence: UInt64) {
        let i = firstSlot(notBelow: sequence)
        if i < items.count && items[i] == sequence { return }
        insert(sequence)
    }

    /// Removes `sequence`; returns whether it was a member.
    @discardableResult
    mutating func remove(_ sequence: UInt64) -> Bool {
        // Jobs mostly leave a set in the order they entered it (they start,
        // end and are forgotten about in submission order): the first
        // member is tried before a search over a set that may be large.
        let i = head < items.count && items[head] == sequence ? head : firstSlot(notBelow: sequence)
        guard i < items.count, items[i] == sequence else { return false }
        count -= 1
        if i == head {
            head += 1
            while head < items.count && items[head] & Self.removedBit != 0 {
                head += 1
                marked -= 1
            }
        } else {
            items[i] |= Self.removedBit
            marked += 1
        }
        if count == 0 {
            items.removeAllKeepingCapacity(ifAtMost: 1024)
            head = 0
            marked = 0
        } else if head + marked >= 64 && (head + marked) * 2 >= items.count {
            sweep()
        }
        return true
    }

    /// Calls `body` with each member above `after` (every member when nil),
    /// ascending, until it returns false.
    func forEach(after: UInt64?, _ body: (UInt64) -> Bool) {
        var i = after.map { firstSlot(notBelow: $0 &+ 1) } ?? head
        while i < items.count {
            let s = items[i]
            i += 1
            if s & Self.removedBit != 0 { continue }
            if !body(s) { return }
        }
    }

    /// The members above `after`, as a cursor for a merge (`JobIndex`).
    func members(after: UInt64?) -> Members {
        Members(items: items, next: after.map { firstSlot(notBelow: $0 &+ 1) } ?? head)
    }

    /// A walk over the members from one slot on.
    struct Members {
        fileprivate let items: [UInt64]
        fileprivate var next: Int

        /// The next member, or nil past the last.
        mutating func pop() -> UInt64? {
            while next < items.count {
                let s = items[next]
                next += 1
                if s & SequenceSet.removedBit == 0 { return s }
            }
            return nil
        }
    }

    /// The first slot at or after `head` whose sequence is `sequence` or above.
    private func firstSlot(notBelow sequence: UInt64) -> Int {
        var low = head, high = items.count
        while low < high {
            let mid = (low + high) / 2
            if items[mid] & ~Self.removedBit < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Drops spent and marked slots: O(n) once per n/2 removals.
    private mutating func sweep() {
        var kept: [UInt64] = []
        kept.reserveCapacity(count)
        for s in items[head...] where s & Self.removedBit == 0 { kept.append(s) }
        items = kept
        head = 0
        marked = 0
    }
}
