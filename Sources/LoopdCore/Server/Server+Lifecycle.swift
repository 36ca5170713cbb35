import LoopRuntime
import LoopdProtocol

/// Start-up replay and ordered shutdown. Main thread only.
extension Server {
    /// Queues again every durable job that was acknowledged and had not
    /// finished when the daemon last stopped (at-least-once).
    func replay(_ pending: [DurableJob]) {
        for d in pending {
            let request = SubmitRequest(action: d.action, args: d.args, placement: Placement(journalValue: d.placement),
                                        wait: false, delayMs: d.delayMs, timeoutMs: d.timeoutMs, mode: d.mode, durable: true)
            do {
                let owner = JobOwner(uid: d.clientUID, gid: d.clientGID, groups: d.clientGroups)
                let job = try accept(request, owner: owner, jobID: d.id, submittedAt: d.submittedAt)
                job.worker.dispatch(job)
                log(.info, "replaying durable job \(d.id)", [(.jobID, d.id), (.action, d.action)])
            } catch {
                log(.error, "cannot replay durable job \(d.id): \(error)", [(.jobID, d.id)])
                journal?.appendFinished(FinishedJob(id: d.id, state: JobState.failed.rawValue,
                                                    resultJSON: JSON.object([("replay_error", .string(error.message))]).serialized(),
                                                    finishedAt: unixMilliseconds(), clientUID: d.clientUID))
                armCommit()
            }
        }
    }

    /// SIGTERM: stop accepting, give running jobs the grace period, then stop.
    func beginShutdown() {
        guard state == .running else { return }
        state = .draining
        notifier.stopping()
        // Ask for the grace period plus a margin beyond TimeoutStopSec=.
        notifier.extendTimeout(microseconds: UInt64(config.server.shutdownGraceMs + 5_000) * 1000)
        log(.notice, "stopping: no new jobs; waiting up to \(config.server.shutdownGraceMs) ms for running jobs", id: .stopping)
        listener?.close()
        listener = nil
        let deadline = monotonicNow() + UInt64(config.server.shutdownGraceMs) * 1_000_000
        let poll = LoopTimer(after: .zero, interval: .milliseconds(20)) { [unowned self] timer in
            let running = workers.contains { $0.runningJob.jobID != nil }
            if !running || monotonicNow() >= deadline {
                timer.invalidate()
                finishShutdown()
            }
        }
        loop.add(poll, forMode: .common)
    }

    private func finishShutdown() {
        // Stop the workers first: a job's end travels to this loop as a
        // block, and a worker can have cleared its running job before that
        // block arrives. Once the workers are joined every such block is
        // queued here, ahead of the one below, so the commit records them
        // and a clean stop leaves nothing finished to replay
        // (bug clean-stop-replays-finished-job).
        for w in workers { w.stop() }
        loop.perform(inModes: [.common]) { [unowned self] in
            commitJournal()
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

extension Placement {
    /// How the journal spells a placement: "any", "worker:NAME" or "key:KEY".
    var journalValue: String {
        switch self {
        case .any: "any"
        case .worker(let w): "worker:\(w)"
        case .key(let k): "key:\(k)"
        }
    }

    init(journalValue v: String) {
        if v.hasPrefix("worker:") { self = .worker(String(v.dropFirst(7))) }
        else if v.hasPrefix("key:") { self = .key(String(v.dropFirst(4))) }
        else { self = .any }
    }
}

extension DurableJob {
    init(_ job: Job) {
        self.init(id: job.id, action: job.request.action, args: job.request.args,
                  placement: job.request.placement.journalValue, delayMs: job.request.delayMs,
                  timeoutMs: job.request.timeoutMs, mode: job.request.mode,
                  submittedAt: job.submittedAtUnixMs, clientUID: job.owner.uid, clientGID: job.owner.gid,
                  clientGroups: job.owner.groups)
    }
}
