/// The ids of the jobs whose id does not name their sequence: a replayed
/// durable job keeps the id the run that accepted it gave it. They all
/// come in one burst, the replay at start, so they are appended to an
/// array, sorted once when it ends (`seal`), and found by binary search:
/// a replay of a million jobs costs no hash-table entry per job and no
/// random memory access per job. Ids over 16 bytes (loopd makes none) go
/// to a dictionary. Main thread only (part of `JobTable`).
struct OtherJobIDs {
    /// An id of up to 16 bytes as two big-endian words, zero-padded:
    /// ordered as the bytes are, and unique (an id holds no zero byte).
    private struct Packed: Comparable {
        let high: UInt64
        let low: UInt64

        init?(_ id: String) {
            var high: UInt64 = 0, low: UInt64 = 0, n = 0
            for byte in id.utf8 {
                guard n < 16, byte != 0 else { return nil }
                if n < 8 { high |= UInt64(byte) << (56 - 8 * n) } else { low |= UInt64(byte) << (56 - 8 * (n - 8)) }
                n += 1
            }
            self.high = high
            self.low = low
        }

        static func < (a: Packed, b: Packed) -> Bool { (a.high, a.low) < (b.high, b.low) }
    }

    private var entries: [(id: Packed, sequence: UInt64)] = []
    private var isSorted = true
    private var long: [String: UInt64] = [:]
    /// Ids given whose job has not been removed; at 0 the index empties itself.
    private(set) var live = 0

    var isEmpty: Bool { live == 0 }

    mutating func reserve(_ count: Int) {
        entries.reserveCapacity(entries.count + count)
    }

    mutating func insert(_ id: String, sequence: UInt64) {
        live += 1
        guard let packed = Packed(id) else {
            long[id] = sequence
            return
        }
        if let last = entries.last, !(last.id < packed) { isSorted = false }
        entries.append((packed, sequence))
    }

    /// Sorts what the inserts appended (the end of a replay).
    mutating func seal() {
        guard !isSorted else { return }
        entries.sort { $0.id < $1.id }
        isSorted = true
    }

    /// The sequence `id` was given, if it was (the job may have been
    /// removed since: the caller checks the job it finds).
    func sequence(of id: String) -> UInt64? {
        guard let packed = Packed(id) else { return long[id] }
        if !isSorted { return entries.last { $0.id == packed }?.sequence }
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].id < packed { low = mid + 1 } else { high = mid }
        }
        return low < entries.count && entries[low].id == packed ? entries[low].sequence : nil
    }

    /// One of the ids is gone (its job was forgotten); once all are, the
    /// storage goes too.
    mutating func removed(_ id: String) {
        // A packed entry stays in place until all are gone: lookups check
        // the job they find.
        if !long.isEmpty { long[id] = nil }
        live -= 1
        if live == 0 {
            entries = []
            long = [:]
            isSorted = true
        }
    }
}
