import LoopRuntime

/// What the service manager sees of the daemon while it runs: STATUS=
/// kept current, and the watchdog pinged only while every worker's loop
/// turns. Main thread only (its timers run on the main loop).
final class ServiceMonitor: @unchecked Sendable {
    let notifier: Notifier
    private let scheduler: JobScheduler
    private let loop: Loop
    private let log: DaemonLogger
    /// The STATUS= text last sent.
    private var lastStatus = ""
    /// Workers whose current stall was logged already.
    private var stallsReported: Set<String> = []

    init(notifier: Notifier, scheduler: JobScheduler, loop: Loop, log: DaemonLogger) {
        self.notifier = notifier
        self.scheduler = scheduler
        self.loop = loop
        self.log = log
    }

    /// The STATUS= text: workers, queued, running, completed, failed.
    func statusLine() -> String {
        scheduler.recordReports()  // ends a lane reported lazily count too
        let load = scheduler.loadFigures
        return "workers \(scheduler.queues.count), queued \(load.waiting), running \(load.running), "
            + "completed \(scheduler.stats.completed), failed \(scheduler.stats.failed + scheduler.stats.timedOut)"
    }

    /// Keeps STATUS= current, at most once a second and only when it changed.
    func startStatusReports() {
        guard notifier.isActive else { return }
        let t = LoopTimer(after: .seconds(1), interval: .seconds(1), tolerance: .milliseconds(100)) { [unowned self] _ in
            let line = statusLine()
            if line != lastStatus {
                notifier.status(line)
                lastStatus = line
            }
        }
        loop.add(t, forMode: .common)
    }

    /// Pings the watchdog at half its interval from a main-loop timer, but
    /// only while every worker's loop turns within `stallThreshold`: a
    /// stalled worker (or a stalled main loop, which cannot run this timer)
    /// stops the pings, and systemd restarts the service.
    func startWatchdog(interval: Duration, stallThreshold threshold: Duration) {
        let t = LoopTimer(after: .zero, interval: interval / 2) { [unowned self] _ in
            var healthy = true
            for w in scheduler.workers {
                let stalled = w.thread.loop.stalledDuration
                guard stalled >= threshold else {
                    stallsReported.remove(w.name)
                    continue
                }
                healthy = false
                if stallsReported.insert(w.name).inserted {
                    let job = w.runningJob.jobID ?? "none"
                    log(.critical, "worker \(w.name) stalled for \(stalled) in job \(job); watchdog pings stop",
                        [(.worker, w.name), (.jobID, job)], id: .workerStalled)
                }
            }
            if healthy { notifier.watchdog() }
        }
        loop.add(t, forMode: .common)
        log(.info, "watchdog: pinging every \(interval / 2) while workers turn within \(threshold)")
    }
}
