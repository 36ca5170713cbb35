import LoopRuntime
import LoopdProtocol

/// Live reloads (SIGHUP). Main thread only.
extension Server {
    /// Applies a re-read configuration: actions and limits at once, new
    /// workers started; what cannot change live is named in the log.
    func apply(_ fresh: DaemonConfig, actions table: [String: any JobAction]) {
        var added: [String] = []
        for w in fresh.workers where scheduler.queue(named: w.name) == nil {
            scheduler.addWorker(w)
            added.append(w.name)
        }
        var needRestart: [String] = []
        if fresh.server.socketPath != config.server.socketPath { needRestart.append("server.socket") }
        if fresh.server.stateDirectory != config.server.stateDirectory { needRestart.append("server.state_dir") }
        // Job cgroups are set up once, at start.
        if fresh.exec.cgroup != config.exec.cgroup { needRestart.append("exec.cgroup") }
        // The node's connection and identity are made once, at start.
        if fresh.fleet != config.fleet { needRestart.append("[fleet]") }
        let removed = config.workers.map(\.name).filter { name in !fresh.workers.contains { $0.name == name } }
        if !removed.isEmpty { needRestart.append("removed workers \(removed.joined(separator: ", "))") }
        let replaced = workers.filter { w in fresh.workers.contains { $0.name == w.name && $0.placement != w.placement } }
        if !replaced.isEmpty { needRestart.append("placement of \(replaced.map(\.name).joined(separator: ", "))") }
        var kept = fresh
        kept.server.socketPath = config.server.socketPath
        kept.server.stateDirectory = config.server.stateDirectory
        kept.exec.cgroup = config.exec.cgroup
        kept.fleet = config.fleet
        kept.workers = workers.map { w in
            var c = fresh.workers.first { $0.name == w.name } ?? DaemonConfig.Worker(name: w.name)
            c.placement = w.placement
            return c
        }
        config = kept
        scheduler.reconfigure(kept, actions: table)
        applySpin()
        schedules.reload(kept.schedules)
        var message = "configuration reloaded: \(scheduler.actions.count) actions, \(workers.count) workers, "
            + "\(kept.schedules.count) schedules"
        if !added.isEmpty { message += ", started \(added.joined(separator: ", "))" }
        if !needRestart.isEmpty { message += "; needs a restart to change: \(needRestart.joined(separator: "; "))" }
        log(.notice, message, id: .reloaded)
    }
}
