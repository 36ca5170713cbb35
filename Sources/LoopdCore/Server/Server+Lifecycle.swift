import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// Ordered shutdown. Main thread only.
extension Server {
    /// SIGTERM: stop accepting, give running jobs the grace period, then
    /// stop the process trees of exec jobs still running (SIGTERM, SIGKILL
    /// after their action's `kill_grace_ms`), then stop. Those jobs stay
    /// unended: a durable one runs again after the restart.
    func beginShutdown() {
        guard state == .running else { return }
        state = .draining
        scheduler.stopAccepting()
        schedules.stop()
        notifier.stopping()
        let killGraceMs = config.actions.values.compactMap(\.exec?.killGraceMs).max() ?? 0
        // Ask for the grace, the trees' kill grace and a margin beyond TimeoutStopSec=.
        notifier.extendTimeout(microseconds: UInt64(config.server.shutdownGraceMs + killGraceMs + 5_000) * 1000)
        log(.notice, "stopping: no new jobs; waiting up to \(config.server.shutdownGraceMs) ms for running jobs", id: .stopping)
        listener?.close()
        listener = nil
        let graceEnds = monotonicNanoseconds() + UInt64(config.server.shutdownGraceMs) * 1_000_000
        // Past this, trees that ignore even SIGKILL (a process stuck in the
        // kernel) no longer hold the stop up; their main processes get
        // SIGKILL again when the workers end (the parent-death signal).
        let treesEnd = graceEnds + UInt64(killGraceMs + 1_000) * 1_000_000
        let poll = LoopTimer(after: .zero, interval: .milliseconds(20)) { [unowned self] timer in
            let now = monotonicNanoseconds()
            let running = workers.contains { $0.runningJob.jobID != nil }
            let trees = execSupervisor.liveTrees
            if !stoppingTrees && running && now >= graceEnds {
                stoppingTrees = true
                log(.notice, "stopping: the grace has passed; stopping the processes of \(trees) running exec jobs")
                scheduler.stopRunningJobs()
            }
            if !running || (stoppingTrees && (trees == 0 || now >= treesEnd)) {
                timer.invalidate()
                finishShutdown()
            }
        }
        loop.add(poll, forMode: .common)
    }

    private func finishShutdown() {
        // Stop the workers first: a job's end travels to this loop as a
        // lane report, and a worker can have cleared its running job before
        // the report's block arrives. Once the workers are joined every such
        // block is queued here, ahead of the one below, so the commit
        // records them and a clean stop leaves nothing finished to replay.
        for w in workers { w.stop() }
        scheduler.workersStopped()
        loop.perform(inModes: [.common]) { [unowned self] in
            scheduler.settle()
            log.flushHeld()
            for c in Array(connections.values) {
                c.flush()
                c.close()
            }
            state = .stopped
            loop.stop()
        }
    }
}
