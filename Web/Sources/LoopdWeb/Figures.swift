import Foundation

/// One reading of the daemon's own figures: the counters of `stats` and the
/// buckets of two histograms of `metrics` (`loopd_job_wait_seconds`,
/// `loopd_job_run_seconds`), summed over their labels.
struct FigureSample: Sendable, Equatable {
    var at: Date
    /// Jobs that completed.
    var completed: Int64
    /// Jobs that failed or timed out.
    var failed: Int64
    /// Cumulative bucket counts by upper bound (seconds), `+Inf` last.
    var wait: Histogram
    var run: Histogram
}

/// A Prometheus histogram's cumulative buckets, by ascending upper bound.
struct Histogram: Sendable, Equatable {
    var bounds: [Double] = []
    var counts: [Double] = []

    /// The buckets of `family` in Prometheus text, summed over every
    /// series of the family (each label set gives one count per bound).
    init(family: String, in text: String) {
        var byBound: [Double: Double] = [:]
        let prefix = family + "_bucket{"
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where line.hasPrefix(prefix) {
            guard let le = line.range(of: "le=\"") else { continue }
            let rest = line[le.upperBound...]
            guard let close = rest.firstIndex(of: "\"") else { continue }
            let boundText = rest[..<close]
            let bound = boundText == "+Inf" ? Double.infinity : Double(boundText)
            guard let bound, let space = line.lastIndex(of: " "),
                  let count = Double(line[line.index(after: space)...]) else { continue }
            byBound[bound, default: 0] += count
        }
        bounds = byBound.keys.sorted()
        counts = bounds.map { byBound[$0]! }
    }

    init(bounds: [Double], counts: [Double]) {
        self.bounds = bounds
        self.counts = counts
    }

    /// The observations between `earlier` and this reading: counts
    /// subtracted bound by bound (a restart of the daemon, where counts
    /// fall, gives this reading's own).
    func since(_ earlier: Histogram) -> Histogram {
        guard earlier.bounds == bounds else { return self }
        let diff = zip(counts, earlier.counts).map { $0 - $1 }
        if diff.contains(where: { $0 < 0 }) { return self }
        return Histogram(bounds: bounds, counts: diff)
    }

    /// The `q` quantile, interpolated linearly inside its bucket as
    /// Prometheus's `histogram_quantile` does; nil without observations.
    /// A quantile in the `+Inf` bucket is the highest finite bound.
    func quantile(_ q: Double) -> Double? {
        guard let total = counts.last, total > 0 else { return nil }
        let rank = q * total
        var lowerBound = 0.0
        var lowerCount = 0.0
        for (bound, count) in zip(bounds, counts) {
            if count >= rank {
                if bound.isInfinite { return lowerBound }
                let inBucket = count - lowerCount
                return inBucket <= 0 ? bound : lowerBound + (bound - lowerBound) * (rank - lowerCount) / inBucket
            }
            lowerBound = bound
            lowerCount = count
        }
        return lowerBound
    }
}

/// The recent readings: every one of the last `fineCapacity` (the last
/// minutes), and one a minute for the last day. Charts are drawn from
/// differences between neighbouring readings.
struct FigureHistory: Sendable {
    private(set) var fine: [FigureSample] = []
    private(set) var coarse: [FigureSample] = []
    let fineCapacity: Int
    let coarseCapacity = 24 * 60
    let coarseStep: TimeInterval = 60

    init(fineCapacity: Int) { self.fineCapacity = fineCapacity }

    mutating func append(_ s: FigureSample) {
        fine.append(s)
        if fine.count > fineCapacity { fine.removeFirst(fine.count - fineCapacity) }
        if let last = coarse.last, s.at.timeIntervalSince(last.at) < coarseStep { return }
        coarse.append(s)
        if coarse.count > coarseCapacity { coarse.removeFirst(coarse.count - coarseCapacity) }
    }

    /// The readings of `range`.
    func samples(_ range: ChartRange) -> [FigureSample] { range == .minutes ? fine : coarse }
}

/// The span a chart covers.
enum ChartRange: String, Sendable, CaseIterable {
    case minutes, day

    var title: String { self == .minutes ? "last minutes" : "last 24 hours" }
}

/// The series the overview charts, one point per pair of neighbouring readings.
struct ChartSeries: Sendable, Equatable {
    var times: [Date] = []
    var completedPerSecond: [Double] = []
    var failedPerSecond: [Double] = []
    /// Wait and run time quantiles (seconds); nil where no job started or ended.
    var wait: [Quantiles] = []
    var run: [Quantiles] = []

    struct Quantiles: Sendable, Equatable {
        var p50: Double?
        var p95: Double?
        var p99: Double?

        init(_ h: Histogram) {
            p50 = h.quantile(0.5)
            p95 = h.quantile(0.95)
            p99 = h.quantile(0.99)
        }
    }

    init(_ samples: [FigureSample]) {
        for (a, b) in zip(samples, samples.dropFirst()) {
            let dt = b.at.timeIntervalSince(a.at)
            guard dt > 0 else { continue }
            times.append(b.at)
            // A restart of the daemon sets its counters back: count from zero.
            let done = b.completed >= a.completed ? b.completed - a.completed : b.completed
            let failed = b.failed >= a.failed ? b.failed - a.failed : b.failed
            completedPerSecond.append(Double(done) / dt)
            failedPerSecond.append(Double(failed) / dt)
            wait.append(Quantiles(b.wait.since(a.wait)))
            run.append(Quantiles(b.run.since(a.run)))
        }
    }
}
