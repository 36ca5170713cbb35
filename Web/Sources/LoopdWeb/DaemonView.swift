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
        /// The latest jobs, newest first.
        var recent: LatestJobs
        var charts: ChartSeries
        var range: ChartRange
    }

    /// The newest jobs submitted within a window.
    struct LatestJobs: Sendable {
        var jobs: [JobStatus]
        /// The window they were looked for in (seconds).
        var window: TimeInterval
        /// False when the window held more jobs than were read: the list
        /// is then the latest of those read, and may miss newer ones.
        var isComplete: Bool
    }

    /// How many jobs the overview lists, and the windows it looks in for
    /// them, narrowest first.
    static let recentCount = 12
    static let recentWindows: [TimeInterval] = [1, 10, 60, 15 * 60]

    func overview(range: ChartRange) async throws -> Overview {
        async let workers = client.workers()
        async let stats = client.stats()
        async let running = client.jobs(JobsQuery(states: [.running], limit: 100))
        async let recent = latestJobs(count: Self.recentCount)
        let charts = ChartSeries(history.withLock { $0.samples(range) })
        return try await Overview(workers: workers, stats: stats, running: running.jobs, recent: recent,
                                  charts: charts, range: range)
    }

    /// The newest `count` jobs, newest first. loopd lists jobs oldest first,
    /// so the list is read to its end: first over the last second, then
    /// wider windows until one holds `count` jobs or the widest is read. A
    /// narrow window first keeps a busy daemon's answer small; at most
    /// `maxPages` pages are read in any window.
    func latestJobs(count: Int, maxPages: Int = 3, now: Date = Date()) async throws -> LatestJobs {
        var found = LatestJobs(jobs: [], window: 0, isComplete: true)
        for window in Self.recentWindows {
            var query = JobsQuery(submittedSinceUnixMs: Int64((now.timeIntervalSince1970 - window) * 1000),
                                  limit: JobsQuery.maxLimit)
            var kept: [JobStatus] = []
            var complete = false
            for _ in 0..<maxPages {
                let page = try await client.jobs(query)
                kept = Array((kept + page.jobs).suffix(count))
                guard let next = page.nextCursor else {
                    complete = true
                    break
                }
                query.cursor = next
            }
            found = LatestJobs(jobs: kept.reversed(), window: window, isComplete: complete)
            if kept.count >= count || !complete { break }
        }
        return found
    }

    func jobs(_ query: JobsQuery) async throws -> JobsPage { try await client.jobs(query) }

    func job(_ id: String) async throws -> JobStatus { try await client.status(job: id) }

    func schedules() async throws -> [ScheduleInfo] { try await client.schedules() }

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
