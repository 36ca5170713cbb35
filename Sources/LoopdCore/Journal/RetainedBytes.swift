import LoopdProtocol

/// Heap sizes of the values a retained job keeps, as the allocator sees
/// them: a header per allocation, rounded up to its 16-byte granule. The
/// one estimate for a job kept for `status`, live (`Job.retainedBytes`) or
/// as the journal's record of a durable end (`FinishedJob.retainedBytes`),
/// so `limits.max_retained_bytes` bounds both alike. Here, below the job
/// table, because the journal counts with it too.
enum RetainedBytes {
    /// An array's or a native string's allocation header, with the
    /// allocator's own word.
    static let arrayHeader = 40
    /// A class instance's header: its isa pointer and reference counts.
    static let objectHeader = 16

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

extension FinishedJob {
    /// The fixed part of a retained durable end, in bytes: its entry in
    /// the journal's table of ends (the key and the record, at the
    /// dictionary's three-quarter load) and in its expiry queue. From the
    /// types' layout, as the allocator lays them out.
    static var retainedFixedBytes: Int {
        let entry = MemoryLayout<String>.stride + MemoryLayout<FinishedJob>.stride + 2 * MemoryLayout<Int>.stride
        return entry * 4 / 3 + MemoryLayout<(String, Int64)>.stride
    }

    /// This end's estimated footprint in the journal's memory, counted as
    /// a live job's (`Job.retainedBytes`): the fixed part, then what its
    /// strings and attempt errors hold on the heap.
    var retainedBytes: Int {
        var n = Self.retainedFixedBytes + RetainedBytes.of(id) + RetainedBytes.of(state) + RetainedBytes.of(resultJSON)
        if let d = details {
            n += RetainedBytes.of(d.worker) + RetainedBytes.of(d.action)
            if let code = d.errorCode { n += RetainedBytes.of(code) }
            if let message = d.errorMessage { n += RetainedBytes.of(message) }
            if let key = d.uniqueKey { n += RetainedBytes.of(key) }
            if !d.attemptErrors.isEmpty {
                n += RetainedBytes.arrayHeader + d.attemptErrors.count * MemoryLayout<AttemptRecord>.stride
                for a in d.attemptErrors { n += RetainedBytes.of(a.code) + RetainedBytes.of(a.message) }
            }
            if let links = d.links {
                n += RetainedBytes.objectHeader + 3 * MemoryLayout<String>.stride
                    + (links.retryOf.map(RetainedBytes.of) ?? 0) + (links.retriedAs.map(RetainedBytes.of) ?? 0)
                if let request = links.request {
                    n += MemoryLayout<DurableJob>.stride + RetainedBytes.of(request.id) + RetainedBytes.of(request.action)
                        + RetainedBytes.of(request.placement) + RetainedBytes.arrayHeader
                        + request.args.reduce(request.args.count * MemoryLayout<String>.stride) { $0 + RetainedBytes.of($1) }
                }
            }
        }
        return n
    }
}
