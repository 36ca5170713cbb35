/// The two rates `loopctl top`'s header shows, one value per refresh:
/// throughput (jobs completed per second) and failures (jobs failed or
/// timed out per second), each the difference between the `stats`
/// counters of two consecutive refreshes over the time between them. The
/// last `capacity` values of each are kept, for the sparklines.
struct RateHistory: Sendable, Equatable {
    /// How many values each sparkline shows at most.
    static let capacity = 60

    /// Counters at one instant.
    struct Sample: Sendable, Equatable {
        /// When they were read, on the monotonic clock.
        var atNanoseconds: UInt64
        /// `stats.completed`.
        var completed: Int64
        /// `stats.failed + stats.timed_out`.
        var failedOrTimedOut: Int64
    }

    /// Jobs completed per second, oldest first.
    private(set) var throughput: [Double] = []
    /// Jobs failed or timed out per second, oldest first.
    private(set) var failures: [Double] = []
    /// The sample the next rate is counted from.
    private var last: Sample?

    /// Counts the rates since the last sample, if there is one. Counters
    /// that went down (another daemon behind the socket) or no time passed
    /// give no rate; the sample becomes the start of the next one.
    mutating func record(_ sample: Sample) {
        defer { last = sample }
        guard let last, sample.atNanoseconds > last.atNanoseconds,
              sample.completed >= last.completed, sample.failedOrTimedOut >= last.failedOrTimedOut else { return }
        let seconds = Double(sample.atNanoseconds - last.atNanoseconds) / 1e9
        append(Double(sample.completed - last.completed) / seconds, to: &throughput)
        append(Double(sample.failedOrTimedOut - last.failedOrTimedOut) / seconds, to: &failures)
    }

    private func append(_ value: Double, to values: inout [Double]) {
        values.append(value)
        if values.count > Self.capacity { values.removeFirst(values.count - Self.capacity) }
    }
}

/// Values as a line of block characters, one a value, from `▁` (zero) to
/// `█` (the largest shown); a value above zero is never drawn as `▁`, so
/// a trickle stays visible next to a burst.
enum Sparkline {
    /// The eight heights.
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The line for `values`, oldest first.
    static func text(_ values: [Double]) -> String {
        let top = values.max() ?? 0
        return String(values.map { value in
            guard top > 0, value > 0 else { return blocks[0] }
            // 1...7: the upper seven heights share the range above zero.
            let level = 1 + Int((value / top * 6).rounded())
            return blocks[min(max(level, 1), blocks.count - 1)]
        })
    }
}
