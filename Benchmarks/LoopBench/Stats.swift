import LoopPlatform

// Timestamps are `monotonicNanoseconds()`: CLOCK_MONOTONIC, the clock every
// subject's timers run on here (LoopRuntime, `NIODeadline`, `DispatchTime`
// and CF all read it on Linux), so a subject's deadlines and ours compare.

/// A set of measurements (nanoseconds) with nearest-rank percentiles taken
/// from a sorted copy. Exact, and fast enough for the ≤ 10^6 samples we keep.
struct Percentiles: Sendable {
    /// The samples, ascending.
    let sorted: [Int64]

    init(_ samples: [Int64]) { sorted = samples.sorted() }

    var count: Int { sorted.count }
    var isEmpty: Bool { sorted.isEmpty }
    var min: Int64 { sorted.first ?? 0 }
    var max: Int64 { sorted.last ?? 0 }

    /// The nearest-rank percentile: the smallest sample with at least `p`
    /// percent of the samples at or below it. `p` is in 0...100.
    func percentile(_ p: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var p50: Int64 { percentile(50) }
    var p99: Int64 { percentile(99) }
}

/// The median of a few repetitions' results (mean of the middle two when even).
func median(_ values: [Double]) -> Double {
    precondition(!values.isEmpty, "median of no values")
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}
