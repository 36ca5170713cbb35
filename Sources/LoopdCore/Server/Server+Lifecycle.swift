import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// Ordered shutdown. Main thread only.
extension Server {
    /// SIGTERM: stop accepting, give running jobs the grace period, then stop.
    func beginShutdown() {
        guard state == .running else { return }
        state = .draining
        scheduler.isAccepting = false
        notifier.stopping()
        // Ask for the grace period plus a margin beyond TimeoutStopSec=.
        notifier.extendTimeout(microseconds: UInt64(config.server.shutdownGraceMs + 5_000) * 1000)
        log(.notice, "stopping: no new jobs; waiting up to \(config.server.shutdownGraceMs) ms for running jobs", id: .stopping)
        listener?.close()
        listener = nil
        let deadline = monotonicNanoseconds() + UInt64(config.server.shutdownGraceMs) * 1_000_000
        let poll = LoopTimer(after: .zero, interval: .milliseconds(20)) { [unowned self] timer in
            let running = workers.contains { $0.runningJob.jobID != nil }
            if !running || monotonicNanoseconds() >= deadline {
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
        scheduler.idleTrim.stop()
        loop.perform(inModes: [.common]) { [unowned self] in
            scheduler.recordReports()
            scheduler.commitJournal()
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
