import Foundation
import LoopdClient
import Synchronization

/// What the pages read of loopd, over one `LoopdClient` connection shared
/// by every request (it carries many requests at once and reconnects after
/// a restart of loopd). It sees what its uid may see: loopd's isolation
/// rules apply to the dashboard as to any client.
public final class DaemonView: Sendable {
    let client: LoopdClient
    private let history: Mutex<FigureHistory>
    /// How often the figures are read, and the live views refreshed.
    public let interval: Duration

    public init(socketPath: String, serverUID: LoopdClient.ServerUID = .automatic, interval: Duration) {
        let config = LoopdClient.Configuration(maxInFlight: 64, reconnectsAutomatically: true, serverUID: serverUID)
        client = LoopdClient(socketPath: socketPath, configuration: config)
        self.interval = interval
        // The fine history covers ten minutes, whatever the interval.
        let seconds = max(1, Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
        history = Mutex(FigureHistory(fineCapacity: max(2, Int(600 / seconds))))
    }

    /// The overview's data.
    struct Overview: Sendable {
        var workers: [WorkerInfo]
        var stats: DaemonStats
        var running: [JobStatus]
        /// The latest jobs submitted in the last `recentWindow`, newest first.
        var recent: [JobStatus]
        var charts: ChartSeries
        var range: ChartRange
    }

    /// How far back the overview's recent jobs go, and how many it shows.
    static let recentWindow: TimeInterval = 15 * 60
    static let recentCount = 12

    func overview(range: ChartRange) async throws -> Overview {
        async let workers = client.workers()
        async let stats = client.stats()
        async let running = client.jobs(JobsQuery(states: [.running], limit: 100))
        async let recent = latestJobs(since: Date().addingTimeInterval(-Self.recentWindow), count: Self.recentCount)
        let charts = ChartSeries(history.withLock { $0.samples(range) })
        return try await Overview(workers: workers, stats: stats, running: running.jobs, recent: recent,
                                  charts: charts, range: range)
    }

    /// The newest `count` jobs submitted since `since`, newest first: the
    /// list is in submission order, so its pages are read to the end (at
    /// most `maxPages` of them).
    func latestJobs(since: Date, count: Int, maxPages: Int = 10) async throws -> [JobStatus] {
        var query = JobsQuery(submittedSinceUnixMs: Int64(since.timeIntervalSince1970 * 1000), limit: JobsQuery.maxLimit)
        var kept: [JobStatus] = []
        for _ in 0..<maxPages {
            let page = try await client.jobs(query)
            kept = Array((kept + page.jobs).suffix(count))
            guard let next = page.nextCursor else { break }
            query.cursor = next
        }
        return kept.reversed()
    }

    func jobs(_ query: JobsQuery) async throws -> JobsPage { try await client.jobs(query) }

    func job(_ id: String) async throws -> JobStatus { try await client.status(job: id) }

    func schedules() async throws -> [ScheduleInfo] { try await client.schedules() }

    func identity() async throws -> Pong { try await client.ping() }

    /// Reads the figures once into the history.
    func sample() async throws {
        async let stats = client.stats()
        async let metrics = client.metrics()
        let (s, m) = try await (stats, metrics)
        let reading = FigureSample(
            at: Date(), completed: s.completed, failed: s.failed + s.timedOut,
            wait: Histogram(family: "loopd_job_wait_seconds", in: m.text),
            run: Histogram(family: "loopd_job_run_seconds", in: m.text))
        history.withLock { $0.append(reading) }
    }

    /// Reads the figures every `interval` until the task is cancelled. A
    /// failed reading (loopd restarting) leaves a gap and is tried again.
    public func sampleForever() async {
        while !Task.isCancelled {
            try? await sample()
            try? await Task.sleep(for: interval)
        }
    }
}
