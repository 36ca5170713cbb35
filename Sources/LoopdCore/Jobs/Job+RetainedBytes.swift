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
    /// "Memory"), plus what its entries in the `jobs` indexes added in the
    /// same measurement (`JobIndex`: 521 bytes against 484 without them).
    static let retainedFixedBytes = 496

    /// This ended job's estimated footprint. Main thread, once it has ended
    /// (its result and error are set).
    var retainedBytes: Int {
        var n = Self.retainedFixedBytes + RetainedBytes.of(id) + RetainedBytes.of(actionName)
        n += Job.argumentBytes(args)
        if let mode = mode { n += RetainedBytes.of(mode) }
        if case .key(let key) = placement { n += RetainedBytes.of(key) }
        if let result { n += RetainedBytes.of(result) }
        if let error { n += RetainedBytes.of(error.message) }
        return n
    }
}
