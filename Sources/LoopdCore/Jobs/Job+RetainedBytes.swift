import LoopdProtocol

/// What keeping an ended job for `status` costs in memory, estimated: the
/// bound `limits.max_retained_bytes` is counted in these. Approximate but
/// honest: a fixed part for what every retained job holds (its object, its
/// entries in the table's index, order and retention ring, its request),
/// measured on a running loopd, plus what this job holds beyond it on the
/// heap: strings too long to be stored inline, its arguments, its result
/// and its error message.
extension Job {
    /// The fixed part, in bytes: a retained `noop` job's share of loopd's
    /// resident memory, measured over 100,000 retained jobs with
    /// `Benchmarks/memory.py` (458 bytes on x86-64; docs/OPERATIONS.md,
    /// "Memory").
    static let retainedFixedBytes = 460

    /// This ended job's estimated footprint. Main thread, once it has ended
    /// (its result and error are set).
    var retainedBytes: Int {
        var n = Self.retainedFixedBytes + RetainedBytes.of(id) + RetainedBytes.of(actionName)
        if !args.isEmpty {
            n += RetainedBytes.arrayHeader + args.count * MemoryLayout<String>.stride
            for a in args { n += RetainedBytes.of(a) }
        }
        if let mode = mode { n += RetainedBytes.of(mode) }
        if case .key(let key) = placement { n += RetainedBytes.of(key) }
        if let result { n += RetainedBytes.of(result) }
        if let error { n += RetainedBytes.of(error.message) }
        return n
    }
}

/// Heap sizes of the values a retained job keeps, as the allocator sees
/// them: a header per allocation, rounded up to its 16-byte granule.
enum RetainedBytes {
    /// An array's or a native string's allocation header, with the
    /// allocator's own word.
    static let arrayHeader = 40

    /// A string's heap allocation; none for one of up to 15 UTF-8 bytes,
    /// which Swift stores inline.
    static func of(_ s: String) -> Int {
        let count = s.utf8.count
        return count <= 15 ? 0 : rounded(arrayHeader + count + 1)
    }

    /// Everything a JSON value holds on the heap.
    static func of(_ value: JSON) -> Int {
        switch value {
        case .null, .bool, .integer, .double: return 0
        case .string(let s): return of(s)
        case .array(let elements):
            guard !elements.isEmpty else { return 0 }  // the shared empty storage
            var n = rounded(arrayHeader + elements.count * MemoryLayout<JSON>.stride)
            for e in elements { n += of(e) }
            return n
        case .object(let members):
            guard !members.isEmpty else { return 0 }
            var n = rounded(arrayHeader + members.count * MemoryLayout<(String, JSON)>.stride)
            for (name, e) in members { n += of(name) + of(e) }
            return n
        }
    }

    private static func rounded(_ n: Int) -> Int { (n + 15) & ~15 }
}
