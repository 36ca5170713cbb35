/// Daemon-wide counters and a latency summary. Main thread only.
struct Stats {
    var completed = 0
    var failed = 0
    var timedOut = 0
    var cancelled = 0
    var expired = 0
    /// Failed attempts that were followed by another (`retries`).
    var retries = 0
    /// Replies to waited jobs the worker that ran them wrote (the main loop slept).
    var repliesByWorker = 0
    /// Replies to waited jobs the main loop wrote: it was busy, or the job never ran.
    var repliesByMain = 0

    /// Counts who wrote a waited job's reply.
    mutating func recordReply(byWorker: Bool) {
        if byWorker { repliesByWorker += 1 } else { repliesByMain += 1 }
    }

    /// Counts a job's end.
    mutating func record(_ end: Job.End) {
        switch end {
        case .completed: completed += 1
        case .failed: failed += 1
        case .timedOut: timedOut += 1
        case .cancelled: cancelled += 1
        case .expired: expired += 1
        }
    }
    /// The most recent latencies (acceptance to end) in microseconds.
    private var latencies: [UInt64] = []
    private var next = 0
    private var count = 0
    private let window = 16_384

    mutating func recordLatency(microseconds: UInt64) {
        count += 1
        if latencies.count < window {
            latencies.append(microseconds)
        } else {
            latencies[next] = microseconds
            next = (next + 1) % window
        }
    }

    /// p50, p99 and max of the recent window, and the count of all recorded.
    func latencySummary() -> (count: Int, p50: UInt64, p99: UInt64, max: UInt64) {
        guard !latencies.isEmpty else { return (count, 0, 0, 0) }
        let sorted = latencies.sorted()
        func pick(_ q: Double) -> UInt64 { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        return (count, pick(0.5), pick(0.99), sorted[sorted.count - 1])
    }
}
