import LoopRuntime
import LoopdProtocol

/// What the service manager sees: STATUS=, the gated watchdog, live
/// reloads. Main thread only.
extension Server {
    /// The STATUS= text: workers, queued, running, completed, failed.
    func statusLine() -> String {
        let load = scheduler.loadFigures
        return "workers \(workers.count), queued \(load.waiting), running \(load.running), "
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
    /// only while every worker's loop turns: a stalled worker (or a stalled
    /// main loop, which cannot run this timer) stops the pings, and systemd
    /// restarts the service.
    func startWatchdog(interval: Duration) {
        let threshold = Duration.milliseconds(config.server.stallThresholdMs)
        let t = LoopTimer(after: .zero, interval: interval / 2) { [unowned self] _ in
            var healthy = true
            for w in workers {
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

    /// Applies a re-read configuration: actions and limits at once, new
    /// workers started; what cannot change live is named in the log.
    func apply(_ fresh: DaemonConfig, actions table: [String: any JobAction]) {
        scheduler.actions = table
        var added: [String] = []
        for w in fresh.workers where scheduler.queue(named: w.name) == nil {
            scheduler.addWorker(w)
            added.append(w.name)
        }
        var needRestart: [String] = []
        if fresh.server.socketPath != config.server.socketPath { needRestart.append("server.socket") }
        if fresh.server.stateDirectory != config.server.stateDirectory { needRestart.append("server.state_dir") }
        let removed = config.workers.map(\.name).filter { name in !fresh.workers.contains { $0.name == name } }
        if !removed.isEmpty { needRestart.append("removed workers \(removed.joined(separator: ", "))") }
        let replaced = workers.filter { w in fresh.workers.contains { $0.name == w.name && $0.placement != w.placement } }
        if !replaced.isEmpty { needRestart.append("placement of \(replaced.map(\.name).joined(separator: ", "))") }
        var kept = fresh
        kept.server.socketPath = config.server.socketPath
        kept.server.stateDirectory = config.server.stateDirectory
        kept.workers = workers.map { w in
            var c = fresh.workers.first { $0.name == w.name } ?? DaemonConfig.Worker(name: w.name)
            c.placement = w.placement
            return c
        }
        config = kept
        scheduler.config = kept
        applySpin()
        var message = "configuration reloaded: \(scheduler.actions.count) actions, \(workers.count) workers"
        if !added.isEmpty { message += ", started \(added.joined(separator: ", "))" }
        if !needRestart.isEmpty { message += "; needs a restart to change: \(needRestart.joined(separator: "; "))" }
        log(.notice, message, id: .reloaded)
    }
}
