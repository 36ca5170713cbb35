import Prometheus
import Synchronization

/// One series of the job wait or run time histograms
/// (`loopd_job_wait_seconds`, `loopd_job_run_seconds`), written by the
/// worker that ran the job and read by a scrape.
///
/// Why not swift-prometheus's histogram, as every other series: it takes a
/// lock and adds one to every bucket at or above the value, each add behind
/// a uniqueness check: about 450 instructions an observation, two per job,
/// 3% of a whole job's. Here an observation adds one to its own bucket and
/// its nanoseconds to the sum (relaxed atomic adds, some 30 instructions),
/// and a scrape adds the buckets up. The text is the library's, line for
/// line; a scrape that races an observation may count it in the buckets
/// before the sum, as any lock-free histogram may.
final class JobTimeHistogram: Sendable {
    /// The bounds' count plus one, for the values above the last bound.
    static let slots = 15
    /// `DaemonMetrics.jobSecondsBuckets` in nanoseconds.
    static let boundsNanoseconds: [UInt64] = DaemonMetrics.jobSecondsBuckets.map { UInt64(($0 * 1e9).rounded()) }

    /// `name="value",…`, escaped, for every line of the series.
    let labels: [UInt8]
    /// Observations by the first bound at or above them, then those above the last.
    private let counts: InlineArray<15, Atomic<UInt64>>
    private let sumNanoseconds = Atomic<UInt64>(0)

    /// A series whose labels are `labels`, as `exposition(of:)` writes them.
    init(labels: [UInt8]) {
        precondition(Self.boundsNanoseconds.count + 1 == Self.slots, "one slot per bucket bound, and one above them")
        self.labels = labels
        counts = InlineArray { _ in Atomic(0) }
    }

    /// Counts one observation of `nanoseconds`.
    func record(nanoseconds: UInt64) {
        var slot = 0
        Self.boundsNanoseconds.withUnsafeBufferPointer { bounds in
            while slot < bounds.count && nanoseconds > bounds[slot] { slot += 1 }
        }
        counts[slot].wrappingAdd(1, ordering: .relaxed)
        sumNanoseconds.wrappingAdd(nanoseconds, ordering: .relaxed)
    }

    /// The series' `_bucket`, `_sum` and `_count` lines for the family `name`.
    func render(name: String, into out: inout [UInt8]) {
        var cumulative: UInt64 = 0
        for slot in 0..<Self.slots {
            cumulative &+= counts[slot].load(ordering: .relaxed)
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: "_bucket{".utf8)
            out.append(contentsOf: labels)
            out.append(contentsOf: ",le=\"".utf8)
            let bound = slot < Self.boundsNanoseconds.count ? DaemonMetrics.jobSecondsBuckets[slot].description : "+Inf"
            out.append(contentsOf: bound.utf8)
            out.append(contentsOf: "\"} ".utf8)
            out.append(contentsOf: String(cumulative).utf8)
            out.append(UInt8(ascii: "\n"))
        }
        let seconds = Double(sumNanoseconds.load(ordering: .relaxed)) / 1e9
        for (suffix, value) in [("_sum", seconds.description), ("_count", String(cumulative))] {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: suffix.utf8)
            out.append(UInt8(ascii: "{"))
            out.append(contentsOf: labels)
            out.append(contentsOf: "} ".utf8)
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: "\n"))
        }
    }

    /// Labels as the exposition format writes them: a value's backslashes,
    /// double quotes and line feeds escaped.
    static func exposition(of labels: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, (key, value)) in labels.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: key.utf8)
            out.append(contentsOf: "=\"".utf8)
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        return out
    }
}

/// A family of `JobTimeHistogram`s: one name and help text, a series per
/// label set, made once and kept (as the registry keeps its series). Main
/// thread only; the series it hands out are written from any thread.
final class JobTimeHistogramFamily {
    let name: String
    let help: String
    private var series: [JobTimeHistogram] = []
    private var byLabels: [[UInt8]: JobTimeHistogram] = [:]

    init(descriptor: MetricNameDescriptor) {
        name = descriptor.name
        help = descriptor.helpText ?? ""
    }

    /// The series of `labels`, made on first use.
    func series(_ labels: [(String, String)]) -> JobTimeHistogram {
        let key = JobTimeHistogram.exposition(of: labels)
        if let known = byLabels[key] { return known }
        let made = JobTimeHistogram(labels: key)
        byLabels[key] = made
        series.append(made)
        return made
    }

    /// The family's `# HELP` and `# TYPE` lines and every series, oldest first.
    func render(into out: inout [UInt8]) {
        guard !series.isEmpty else { return }
        out.append(contentsOf: "# HELP \(name) \(help)\n".utf8)
        out.append(contentsOf: "# TYPE \(name) histogram\n".utf8)
        for s in series { s.render(name: name, into: &out) }
    }
}
