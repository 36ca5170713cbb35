import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// What `workers`, `stats` and the service manager's STATUS= report of
/// the jobs. Main thread only.
extension JobScheduler {
    /// One worker's entry in `workers`, as `r` may see it: whether the
    /// worker is busy, with what action and since when, for everyone; the
    /// running job's id only for who may see the job (`JobVisibility`).
    func workerInfo(_ q: WorkerQueue, stallThreshold: Duration, for r: Requester) -> JSON {
        let w = q.worker
        let (loopState, stalled) = w.loopState(stallThreshold: stallThreshold)
        let held = q.held
        let running = w.runningJob.current
        var fields: [(String, JSON)] = [
            ("name", .string(w.name)), ("mode", .string(w.mode)), ("placement", .string(w.placement.rawValue)),
            ("queued", .integer(Int64(q.outstanding - (running == nil ? 0 : 1)))), ("held", .integer(Int64(held))),
            ("running", running.flatMap { mayManage(jobOf: $0.ownerUID, r) ? .string($0.jobID) : nil } ?? .null),
            ("busy", .bool(running != nil)),
        ]
        if let running {
            fields.append(("running_action", .string(running.action)))
            fields.append(("running_since", .string(Timestamp.format(unixMilliseconds: running.startedAtUnixMs))))
        }
        fields += [
            ("loop", .string(loopState)),
            ("stalled_ms", .integer(Int64(stalled.components.seconds * 1000 + stalled.components.attoseconds / 1_000_000_000_000_000))),
            ("completed", .integer(Int64(q.finished))),
        ]
        return .object(fields)
    }

    /// Jobs waiting (queued, delayed, held) and running, over all workers.
    var loadFigures: (waiting: Int, running: Int) {
        let outstanding = queues.reduce(0) { $0 + $1.outstanding }
        let running = queues.reduce(0) { $0 + ($1.worker.runningJob.jobID == nil ? 0 : 1) }
        return (outstanding - running, running)
    }

    /// Sets the metrics read at scrape time: each worker's queue, held
    /// jobs, running job and loop stall, and the journal's totals. From
    /// the counts kept as jobs move: O(workers), whatever the jobs.
    func updateMetrics() {
        for q in queues {
            let running = q.worker.runningJob.jobID != nil
            q.metrics.update(queued: q.outstanding - (running ? 1 : 0), held: q.held,
                             running: running, stalled: q.worker.loop.stalledDuration)
        }
        if let j = journal?.stats { metrics.updateJournal(j) }
    }

    /// `stats`' job and journal figures.
    func statsFields() -> [(String, JSON)] {
        let lat = stats.latencySummary()
        let load = loadFigures
        var fields: [(String, JSON)] = [
            ("accepted", .integer(Int64(jobIDs.accepted))), ("completed", .integer(Int64(stats.completed))),
            ("failed", .integer(Int64(stats.failed))), ("timed_out", .integer(Int64(stats.timedOut))),
            ("cancelled", .integer(Int64(stats.cancelled))), ("expired", .integer(Int64(stats.expired))),
            ("retried", .integer(Int64(stats.retries))),
            ("queued", .integer(Int64(load.waiting))), ("running", .integer(Int64(load.running))),
            ("replies", .object([
                ("by_worker", .integer(Int64(stats.repliesByWorker))), ("by_main", .integer(Int64(stats.repliesByMain))),
            ])),
            ("retained", .object([
                ("jobs", .integer(Int64(table.retainedCount))), ("bytes", .integer(Int64(table.retainedBytes))),
                ("failed_jobs", .integer(Int64(table.retainedFailures.count))),
                ("failed_bytes", .integer(Int64(table.retainedFailures.bytes))),
            ])),
            ("idle_trims", .integer(Int64(idleTrim.trims))),
            ("latency_us", .object([
                ("count", .integer(Int64(lat.count))), ("p50", .integer(Int64(lat.p50))),
                ("p99", .integer(Int64(lat.p99))), ("max", .integer(Int64(lat.max))),
            ])),
        ]
        if let j = journal?.stats {
            fields.append(("journal", .object([
                ("bytes", .integer(Int64(j.fileBytes))), ("pending", .integer(Int64(j.liveJobs))),
                ("retained_finished", .integer(Int64(j.retainedFinished))),
                ("retained_finished_bytes", .integer(Int64(j.retainedFinishedBytes))),
                ("commits", .integer(Int64(j.commits))), ("compactions", .integer(Int64(j.compactions))),
            ])))
        }
        return fields
    }
}
