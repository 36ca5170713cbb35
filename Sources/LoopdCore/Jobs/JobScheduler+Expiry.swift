import LoopPlatform
import LoopRuntime
import LoopdProtocol

// Expiry of waiting work (docs/PROTOCOL.md, "Expiry").
//
// A job submitted with `expires_in_ms` (or under `limits.default_expires_in_ms`)
// that has not started that long after its submission ends `expired`,
// whether it was queued, held for a mode or delayed. The deadline is wall
// time from the submission (`submitted_at + expires_in_ms`), so a durable
// job keeps it across a restart, and one whose deadline passed while loopd
// was down ends `expired` at its replay without running.
//
// No polling: the deadlines wait in a heap, and one timer on the main loop
// is armed at the earliest (`JobTiming`).

extension JobScheduler {
    /// Makes `s` the submit as it will run: the configured default expiry
    /// applied, and an expiry beyond `limits.max_expires_in_ms` refused.
    /// In place: a submit is a large value, and most need no change.
    func applySchedulingLimits(to s: inout SubmitRequest) throws(ProtocolError) {
        if s.expiresInMs == nil, config.limits.defaultExpiresInMs > 0 { s.expiresInMs = config.limits.defaultExpiresInMs }
        if let ms = s.expiresInMs, ms > config.limits.maxExpiresInMs {
            throw ProtocolError(.badRequest,
                                "\"expires_in_ms\" must be at most \(config.limits.maxExpiresInMs) (limits.max_expires_in_ms), not \(ms)")
        }
    }

    /// Ends `job` `expired` if it has not started (nor ended): a waiting
    /// job, wherever it waits (the journal's commit, its worker's delay timer,
    /// its lane's queue), loses its claim to the expiry, as to a cancel.
    func expire(_ job: Job) {
        switch job.state {
        case .ended, .running, .forgotten: return
        case .accepted, .awaitingCommit, .delayed, .queued: break
        }
        guard job.claim.cancel() else { return }  // its lane started it just now
        let ms = job.expiresInMs ?? 0
        end(job, .failure(ProtocolError(.expired, "job \(job.id) did not start within its \(ms) ms expiry"),
                          result: .object([])))
    }
}
