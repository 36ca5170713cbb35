import LoopdProtocol
import Prometheus
import Synchronization

/// The daemon's metrics, kept in one daemon's own `PrometheusCollectorRegistry`
/// (never the process-wide default: several daemons in one process each
/// report their own). The `metrics` request's text is the registry's
/// exposition and the job time histograms' (`render`).
///
/// Cheap on the job path: each job's series (its action on its worker) is
/// looked up once, at acceptance, and kept on the job. The main thread
/// counts acceptances and ends (a relaxed atomic add each); the worker
/// that ran a job records its wait and run times, in histograms of our own
/// (`JobTimeHistogram`: a relaxed atomic add an observation, no lock).
/// What can be read when asked (queue depths, held jobs, loop stalls,
/// connections, the journal's totals) is set at scrape time, not on every
/// change. Main thread only, like the scheduler that owns it (the series
/// it hands out are `Sendable`).
final class DaemonMetrics {
    let registry: PrometheusCollectorRegistry

    /// Upper bounds (seconds) of the job wait and run time buckets: from
    /// ten microseconds (a built-in action on an idle worker) to a minute.
    static let jobSecondsBuckets: [Double] = [
        0.000_01, 0.000_05, 0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60,
    ]
    /// Upper bounds (bytes) of the exec jobs' peak memory buckets: from
    /// 1 MiB (a small tool) to 64 GiB, each four times the one before.
    static let memoryBytesBuckets: [Double] = (0...8).map { Double(1 << (20 + 2 * $0)) }
    /// Upper bounds (seconds) of the journal's fsync time buckets.
    static let fsyncSecondsBuckets: [Double] = [
        0.000_1, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5,
    ]

    private let connectionsAccepted: Counter
    private let connectionsOpen: Gauge
    private let journalWrittenBytes: Counter
    private let journalCommits: Counter
    private let journalSizeBytes: Gauge
    let journalFsyncSeconds: ValueHistogram
    /// The job wait and run time histograms, outside the registry.
    private let jobWaitSeconds: JobTimeHistogramFamily
    private let jobRunSeconds: JobTimeHistogramFamily
    /// The journal's totals at the last scrape: counters grow by the difference.
    private var journalSeen = (bytes: 0, commits: 0)

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        connectionsAccepted = registry.makeCounter(
            descriptor: Self.name("connections", "accepted", "total", "Client connections accepted."))
        connectionsOpen = registry.makeGauge(
            descriptor: Self.name("connections", "open", nil, "Client connections open now."))
        journalWrittenBytes = registry.makeCounter(
            descriptor: Self.name("journal", "written_bytes", "total",
                                  "Bytes the durable-job journal wrote: its commits and compactions."))
        journalCommits = registry.makeCounter(
            descriptor: Self.name("journal", "commits", "total", "Journal group commits that reached the disk."))
        journalSizeBytes = registry.makeGauge(
            descriptor: Self.name("journal", "size_bytes", nil, "Committed length of the journal file."))
        journalFsyncSeconds = registry.makeValueHistogram(
            descriptor: Self.name("journal", "fsync", "seconds", "Time each journal commit's fdatasync took."),
            labels: [], buckets: Self.fsyncSecondsBuckets)
        jobWaitSeconds = JobTimeHistogramFamily(
            descriptor: Self.name("job", "wait", "seconds", "Time from a job's acceptance to its start on the worker."))
        jobRunSeconds = JobTimeHistogramFamily(
            descriptor: Self.name("job", "run", "seconds",
                                  "Time from a job's start on its worker to its end, by action and worker."))
    }

    /// `loopd_<subsystem>_<name>[_<unit>]` with its help text.
    static func name(_ subsystem: String, _ name: String, _ unit: String?, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "loopd", subsystem: subsystem, metricName: name, unitName: unit ?? "",
                             helpText: help)
    }

    // MARK: on the job path

    /// A worker's series that do not depend on the action.
    func worker(named name: String) -> WorkerMetrics {
        WorkerMetrics(name: name, registry: registry, waitSeconds: jobWaitSeconds.series([("worker", name)]))
    }

    /// The series of jobs of `action` on `worker` (made on first use, and
    /// kept by the worker's queue).
    func jobs(action: String, on worker: WorkerMetrics) -> JobMetrics {
        JobMetrics(action: action, worker: worker, registry: registry,
                   runSeconds: jobRunSeconds.series([("action", action), ("worker", worker.name)]))
    }

    func connectionAccepted() { connectionsAccepted.increment() }

    // MARK: at scrape time

    /// Brings the journal's counters up to its totals.
    func updateJournal(_ stats: JournalStats) {
        if stats.writtenBytes > journalSeen.bytes {
            journalWrittenBytes.increment(by: Int64(stats.writtenBytes - journalSeen.bytes))
        }
        if stats.commits > journalSeen.commits {
            journalCommits.increment(by: Int64(stats.commits - journalSeen.commits))
        }
        journalSeen = (max(journalSeen.bytes, stats.writtenBytes), max(journalSeen.commits, stats.commits))
        journalSizeBytes.set(to: Double(stats.fileBytes))
    }

    func updateConnections(open: Int) { connectionsOpen.set(to: Double(open)) }

    /// The Prometheus text exposition of every series, appended to `out`.
    func render(into out: inout [UInt8]) {
        registry.emit(into: &out)
        jobWaitSeconds.render(into: &out)
        jobRunSeconds.render(into: &out)
    }
}

/// One worker's gauges and its job wait time histogram. Immutable; the
/// library's metrics it holds are safe from any thread.
final class WorkerMetrics: Sendable {
    let name: String
    /// From acceptance to the start on this worker, of every job that started.
    let waitSeconds: JobTimeHistogram
    private let queued: Gauge
    private let held: Gauge
    private let running: Gauge
    private let stallSeconds: Gauge

    init(name: String, registry: PrometheusCollectorRegistry, waitSeconds: JobTimeHistogram) {
        self.name = name
        let labels = [("worker", name)]
        self.waitSeconds = waitSeconds
        queued = registry.makeGauge(
            descriptor: DaemonMetrics.name("worker", "queued", "jobs",
                                           "Jobs waiting for the worker now: queued, delayed and held."),
            labels: labels)
        held = registry.makeGauge(
            descriptor: DaemonMetrics.name("worker", "held", "jobs",
                                           "Of the waiting jobs, those the worker's current mode does not admit."),
            labels: labels)
        running = registry.makeGauge(
            descriptor: DaemonMetrics.name("worker", "running", "jobs", "Jobs the worker runs now (0 or 1)."),
            labels: labels)
        stallSeconds = registry.makeGauge(
            descriptor: DaemonMetrics.name("worker", "loop_stall", "seconds",
                                           "How long the worker's loop has been inside its current callout (0 while it waits)."),
            labels: labels)
    }

    /// Sets the gauges to what the worker shows now (scrape time).
    func update(queued: Int, held: Int, running: Bool, stalled: Duration) {
        self.queued.set(to: Double(queued))
        self.held.set(to: Double(held))
        self.running.set(to: running ? 1 : 0)
        stallSeconds.set(to: stalled.seconds)
    }
}

/// The series of one action's jobs on one worker: accepted, ended by
/// state, run time. Looked up once per job, at acceptance. Immutable;
/// the library's metrics it holds are safe from any thread.
final class JobMetrics: Sendable {
    let action: String
    let worker: WorkerMetrics
    let accepted: Counter
    /// One per state of `endStates`, in that order.
    private let ended: [Counter]

    /// The ways a job ends, each a `state` label of `loopd_jobs_ended_total`.
    static let endStates: [JobState] = [.completed, .failed, .timedOut, .cancelled, .expired]
    /// From the start on the worker to the end, of every job that started.
    let runSeconds: JobTimeHistogram
    /// What exec jobs' processes used: made with the first such job, so
    /// actions that start no process add no series. Main thread only.
    private let usage: Mutex<UsageSeries?> = Mutex(nil)
    private let registry: PrometheusCollectorRegistry

    /// CPU time (user, system) and peak memory of exec jobs' processes.
    private struct UsageSeries {
        let cpuSeconds: [Counter]
        let memoryPeakBytes: ValueHistogram
    }

    init(action: String, worker: WorkerMetrics, registry: PrometheusCollectorRegistry, runSeconds: JobTimeHistogram) {
        self.action = action
        self.worker = worker
        let labels = [("action", action), ("worker", worker.name)]
        accepted = registry.makeCounter(
            descriptor: DaemonMetrics.name("jobs", "accepted", "total", "Jobs accepted, by action and worker."),
            labels: labels)
        let endedName = DaemonMetrics.name("jobs", "ended", "total",
                                           "Jobs that ended, by action, worker and how: completed, failed, timed_out, cancelled, expired.")
        ended = Self.endStates.map { state in
            registry.makeCounter(descriptor: endedName, labels: labels + [("state", state.rawValue)])
        }
        self.runSeconds = runSeconds
        self.registry = registry
    }

    /// Counts what an exec job's processes used (main thread).
    func used(_ usage: JobUsage) {
        let series = self.usage.withLock { series in
            if let series { return series }
            let labels = [("action", action), ("worker", worker.name)]
            let cpuName = DaemonMetrics.name("job", "cpu_seconds", "total",
                                             "CPU time exec jobs' processes used, by action, worker and mode (user, system).")
            let made = UsageSeries(
                cpuSeconds: ["user", "system"].map { registry.makeCounter(descriptor: cpuName, labels: labels + [("mode", $0)]) },
                memoryPeakBytes: registry.makeValueHistogram(
                    descriptor: DaemonMetrics.name("job", "memory_peak", "bytes",
                                                   "The most memory each exec job's processes used at once, by action and worker."),
                    labels: labels, buckets: DaemonMetrics.memoryBytesBuckets))
            series = made
            return made
        }
        series.cpuSeconds[0].increment(by: Double(usage.cpuUserUsec) / 1e6)
        series.cpuSeconds[1].increment(by: Double(usage.cpuSystemUsec) / 1e6)
        if let peak = usage.memoryPeakBytes { series.memoryPeakBytes.record(Double(peak)) }
    }

    /// Counts a job's end (main thread); `state` is one of `endStates`.
    func ended(_ state: JobState) {
        switch state {
        case .completed: ended[0].increment()
        case .failed: ended[1].increment()
        case .timedOut: ended[2].increment()
        case .cancelled: ended[3].increment()
        case .expired: ended[4].increment()
        default: assertionFailure("\(state) is not how a job ends")
        }
    }

    /// Records the wait and run times of a job that ran, from monotonic
    /// nanoseconds (its worker's thread, as the job ends).
    func ran(acceptedAt: UInt64, startedAt: UInt64, endedAt: UInt64) {
        worker.waitSeconds.record(nanoseconds: startedAt >= acceptedAt ? startedAt - acceptedAt : 0)
        runSeconds.record(nanoseconds: endedAt >= startedAt ? endedAt - startedAt : 0)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
