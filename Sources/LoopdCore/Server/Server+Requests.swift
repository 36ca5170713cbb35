import LoopRuntime
import LoopdProtocol

/// The protocol's operations (docs/PROTOCOL.md). Main thread only.
extension Server {
    static let version = "0.1.0"

    func handleLine(_ line: ArraySlice<UInt8>, from c: Connection) {
        switch RequestDecoder.decode(line) {
        case .failure(let f):
            c.send(Response.error(id: f.id, f.error))
        case .success(let request):
            handle(request, from: c)
        }
    }

    func handle(_ request: Request, from c: Connection) {
        let id = request.id
        switch request.operation {
        case .ping:
            c.send(Response.ok(id: id, [("pid", .integer(Int64(currentPID()))), ("version", .string(Server.version))]))
        case .submit(let s):
            submit(s, id: id, from: c)
        case .status(let jobID):
            status(jobID, id: id, to: c)
        case .cancel(let jobID):
            cancel(jobID, id: id, to: c)
        case .workers:
            c.send(Response.ok(id: id, [("workers", .array(workers.map(workerInfo)))]))
        case .inspect(let name):
            guard let w = workersByName[name] else {
                c.send(Response.error(id: id, ProtocolError(.unknownWorker, "no worker named \"\(name)\"")))
                return
            }
            c.send(Response.ok(id: id, [("worker", .string(name)), ("description", .string(String(describing: w.thread.loop)))]))
        case .mode(let name, let mode):
            guard let w = workersByName[name] else {
                c.send(Response.error(id: id, ProtocolError(.unknownWorker, "no worker named \"\(name)\"")))
                return
            }
            guard mode != "common", mode != "any" else {
                c.send(Response.error(id: id, ProtocolError(.badRequest, "\"\(mode)\" is not a mode a worker can run")))
                return
            }
            let previous = w.mode
            // Reply once the switch is in effect, so a job submitted after
            // the reply is already judged by the new mode.
            c.pendingReplies += 1
            let loop = self.loop
            w.setMode(mode) { [unowned self] in
                loop.perform(inModes: [.common]) {
                    self.log(.notice, "worker \(name) switched from mode \(previous) to \(mode)", [(.worker, name)])
                    c.pendingReplies -= 1
                    c.send(Response.ok(id: id, [("worker", .string(name)), ("mode", .string(mode)), ("previous", .string(previous))]))
                    c.closeIfDone()
                }
            }
        case .stats:
            c.send(Response.ok(id: id, statsFields()))
        }
    }

    private func workerInfo(_ w: Worker) -> JSON {
        let (loopState, stalled) = w.loopState(stallThreshold: .milliseconds(config.server.stallThresholdMs))
        let mode = w.thread.runMode
        var held = 0
        for job in jobs.values where job.worker === w && !job.state.isFinal && job.phase == .pending {
            if let modes = job.modes, !modes.contains(mode) { held += 1 }
        }
        let running = w.runningJob.jobID
        return .object([
            ("name", .string(w.name)), ("mode", .string(w.mode)),
            ("queued", .integer(Int64(w.outstanding - (running == nil ? 0 : 1)))), ("held", .integer(Int64(held))),
            ("running", running.map { .string($0) } ?? .null), ("loop", .string(loopState)),
            ("stalled_ms", .integer(Int64(stalled.components.seconds * 1000 + stalled.components.attoseconds / 1_000_000_000_000_000))),
            ("completed", .integer(Int64(w.finished))),
        ])
    }

    private func statsFields() -> [(String, JSON)] {
        let lat = stats.latencySummary()
        let queued = workers.reduce(0) { $0 + $1.outstanding }
        let running = workers.reduce(0) { $0 + ($1.runningJob.jobID == nil ? 0 : 1) }
        var fields: [(String, JSON)] = [
            ("accepted", .integer(Int64(stats.accepted))), ("completed", .integer(Int64(stats.completed))),
            ("failed", .integer(Int64(stats.failed))), ("cancelled", .integer(Int64(stats.cancelled))),
            ("queued", .integer(Int64(queued - running))), ("running", .integer(Int64(running))),
            ("connections", .integer(Int64(connections.count))),
            ("latency_us", .object([
                ("count", .integer(Int64(lat.count))), ("p50", .integer(Int64(lat.p50))),
                ("p99", .integer(Int64(lat.p99))), ("max", .integer(Int64(lat.max))),
            ])),
        ]
        if let j = journal?.stats {
            fields.append(("journal", .object([
                ("bytes", .integer(Int64(j.fileBytes))), ("pending", .integer(Int64(j.liveJobs))),
                ("retained_finished", .integer(Int64(j.retainedFinished))),
                ("commits", .integer(Int64(j.commits))), ("compactions", .integer(Int64(j.compactions))),
            ])))
        }
        return fields
    }

    private func status(_ jobID: String, id: RequestID?, to c: Connection) {
        if let job = jobs[jobID] {
            guard mayManage(jobID, of: job.clientUID, from: c, id: id) else { return }
            var fields = job.replyFields(includeDetails: true)
            if let e = job.error { fields.append(("error", e.json)) }
            c.send(Response.ok(id: id, fields))
        } else if let finished = journal?.finishedStatus(id: jobID) {
            guard mayManage(jobID, of: finished.clientUID, from: c, id: id) else { return }
            var fields: [(String, JSON)] = [("job", .string(finished.id)), ("state", .string(finished.state)), ("durable", .bool(true))]
            if let result = try? JSONParser.parse(Array(finished.resultJSON.utf8)) { fields.append(("result", result)) }
            c.send(Response.ok(id: id, fields))
        } else {
            c.send(Response.error(id: id, ProtocolError(.unknownJob, "no job \"\(jobID)\"")))
        }
    }

    private func cancel(_ jobID: String, id: RequestID?, to c: Connection) {
        guard let job = jobs[jobID] else {
            c.send(Response.error(id: id, ProtocolError(.unknownJob, "no job \"\(jobID)\"")))
            return
        }
        guard mayManage(jobID, of: job.clientUID, from: c, id: id) else { return }
        guard !job.state.isFinal, !job.awaitingCommit, job.transition(from: .pending, to: .cancelled) else {
            c.send(Response.ok(id: id, [("job", .string(jobID)), ("cancelled", .bool(false)), ("state", .string(job.visibleState.rawValue))]))
            return
        }
        job.delayToken?.cancel()
        finish(job, .failure(ProtocolError(.cancelled, "job \(jobID) was cancelled before it ran"), result: .object([])), state: .cancelled)
        c.send(Response.ok(id: id, [("job", .string(jobID)), ("cancelled", .bool(true)), ("state", .string(JobState.cancelled.rawValue))]))
    }

    /// A job's status and its cancellation belong to whoever submitted it
    /// (a result can hold a program's output); root and the daemon's own uid
    /// may manage every job. Answers `forbidden` and returns false otherwise.
    private func mayManage(_ jobID: String, of owner: UInt32?, from c: Connection, id: RequestID?) -> Bool {
        if JobOwner.mayManage(jobOf: owner, uid: c.peer.uid, daemonUID: daemonUID) { return true }
        c.send(Response.error(id: id, ProtocolError(.forbidden, "job \"\(jobID)\" belongs to another user")))
        return false
    }
}
