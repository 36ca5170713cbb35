import Prometheus

/// One schedule's series: runs submitted, slots skipped by reason, and how
/// late each run was submitted after its slot (and delay). The series are
/// made at the schedule's first run or skip, so declared schedules that
/// have not fired cost no registry entries (a registry with thousands of
/// series makes each new one slower). Its own totals since start are kept
/// beside them for `schedules`. Main thread only.
final class ScheduleMetrics {
    /// Why a slot did not run.
    enum SkipReason: String, CaseIterable {
        /// loopd did not look in time, and `catch_up` leaves the slot out.
        case missed
        /// The previous run had not ended (`overlap = "skip"`).
        case overlap
        /// The submit was refused (a full queue, loopd stopping, a quota).
        case refused
    }

    private struct Series {
        let runs: Counter
        let skips: [SkipReason: Counter]
        let lateness: ValueHistogram
    }

    private let schedule: String
    private let registry: PrometheusCollectorRegistry
    private var made: Series?
    private(set) var fires: Int64 = 0
    private(set) var skips: Int64 = 0

    /// Upper bounds (seconds) of the lateness buckets: on time (the
    /// timer's tolerance) to an hour (loopd was stopped, the host slept).
    static let latenessBuckets: [Double] = [0.01, 0.1, 0.5, 1, 5, 30, 60, 300, 3600]

    /// Makes each schedule's metrics once: a reload that keeps a schedule keeps them.
    struct Registry {
        let registry: PrometheusCollectorRegistry

        func series(for schedule: String) -> ScheduleMetrics { ScheduleMetrics(schedule: schedule, registry: registry) }
    }

    private init(schedule: String, registry: PrometheusCollectorRegistry) {
        self.schedule = schedule
        self.registry = registry
    }

    private var series: Series {
        if let made { return made }
        let labels = [("schedule", schedule)]
        var skips: [SkipReason: Counter] = [:]
        for reason in SkipReason.allCases {
            skips[reason] = registry.makeCounter(
                descriptor: DaemonMetrics.name("schedule", "skipped_slots", "total",
                                               "Slots of a schedule that submitted no job, by reason."),
                labels: labels + [("reason", reason.rawValue)])
        }
        let s = Series(
            runs: registry.makeCounter(
                descriptor: DaemonMetrics.name("schedule", "runs", "total",
                                               "Jobs a schedule submitted, for its slots and triggers."),
                labels: labels),
            skips: skips,
            lateness: registry.makeValueHistogram(
                descriptor: DaemonMetrics.name("schedule", "lateness", "seconds",
                                               "How long after its slot (and this host's jitter delay) a run was submitted."),
                labels: labels, buckets: Self.latenessBuckets))
        made = s
        return s
    }

    /// A run submitted, `lateSeconds` after its slot (nil: a trigger, which has none).
    func fired(lateSeconds: Double?) {
        fires += 1
        let s = series
        s.runs.increment()
        if let lateSeconds { s.lateness.record(lateSeconds) }
    }

    func skipped(_ reason: SkipReason, count: Int) {
        guard count > 0 else { return }
        skips += Int64(count)
        series.skips[reason]?.increment(by: Int64(count))
    }
}
