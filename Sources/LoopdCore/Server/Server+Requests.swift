import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// The protocol's operations (docs/PROTOCOL.md), routed: jobs to the
/// scheduler, workers and the daemon answered here. Main thread only.
extension Server {
    static let version = LoopdVersion.current

    func handleLine(_ line: ArraySlice<UInt8>, from c: Connection) {
        var request = Request(id: nil, operation: .ping)
        if let f = RequestDecoder.decode(line, into: &request) {
            c.sink.send { Response.error(id: f.id, f.error, into: &$0) }
        } else {
            handle(consume request, from: c)
        }
    }

    func handle(_ request: consuming Request, from c: Connection) {
        let id = request.id
        let r = c.requester
        // Moved out, not copied: a submit's request is a large value.
        var operation = Operation.ping
        swap(&operation, &request.operation)
        switch consume operation {
        case .ping:
            c.sink.send(Response.ok(id: id, [("pid", .integer(Int64(processID()))), ("version", .string(Server.version))]))
        case .submit(let s):
            if s.fleet ?? (config.fleet?.jobs == .fleet) {
                guard let jobs = fleet?.jobs else { return c.sink.send(Response.error(id: id, notInFleet)) }
                jobs.submit(s, id: id, from: r)
            } else if s.node != nil {
                c.sink.send(Response.error(id: id, ProtocolError(.badRequest, "\"node\" pins a fleet job: add \"fleet\": true")))
            } else {
                scheduler.submit(s, id: id, from: r)
            }
        case .status(let jobID):
            if let fleetID = FleetJobID.parse(jobID) {
                guard let jobs = fleet?.jobs else { return scheduler.replyUnknownJob(id: id, to: r) }
                jobs.status(fleetID, id: id, from: r)
            } else {
                scheduler.status(jobID, id: id, from: r)
            }
        case .cancel(let jobID):
            if let fleetID = FleetJobID.parse(jobID) {
                guard let jobs = fleet?.jobs else { return scheduler.replyUnknownJob(id: id, to: r) }
                jobs.cancel(fleetID, id: id, from: r)
            } else {
                scheduler.cancel(jobID, id: id, from: r)
            }
        case .wait(let jobID, let timeoutMs):
            if let fleetID = FleetJobID.parse(jobID) {
                guard let jobs = fleet?.jobs else { return scheduler.replyUnknownJob(id: id, to: r) }
                jobs.wait(fleetID, timeoutMs: timeoutMs, id: id, from: r)
            } else {
                scheduler.wait(jobID, timeoutMs: timeoutMs, id: id, from: r)
            }
        case .jobs(let query) where query.fleet:
            guard let jobs = fleet?.jobs else { return c.sink.send(Response.error(id: id, notInFleet)) }
            jobs.list(query, id: id, from: r)
        case .jobs(let query) where query.withFleet:
            guard let jobs = fleet?.jobs else { return c.sink.send(Response.error(id: id, notInFleet)) }
            jobs.listWithHost(query, id: id, from: r)
        case .jobs(let query):
            scheduler.list(query, id: id, from: r)
        case .workers:
            let threshold = Duration.milliseconds(config.server.stallThresholdMs)
            let workers = scheduler.queues.map { scheduler.workerInfo($0, stallThreshold: threshold, for: r) }
            c.sink.send(Response.ok(id: id, [("workers", .array(workers))]))
        case .inspect(let name):
            guard let w = scheduler.queue(named: name)?.worker else {
                c.sink.send(Response.error(id: id, ProtocolError(.unknownWorker, "no worker named \"\(name)\"")))
                return
            }
            // Addresses and source labels (a child's pid) would point at
            // whoever's job runs there: administrators only.
            let detail: Loop.DescriptionDetail = mayAdminister(r.owner) ? .full : .anonymous
            c.sink.send(Response.ok(id: id, [("worker", .string(name)), ("description", .string(w.thread.loop.describe(detail)))]))
        case .mode(let name, let mode):
            guard mayAdminister(r.owner) else {
                c.sink.send(Response.error(id: id, notAdministrator(r.owner, may: "switch worker modes")))
                return
            }
            switchMode(of: name, to: mode, id: id, from: c)
        case .stats:
            let paused = connections.values.reduce(0) { $0 + ($1.readPaused ? 1 : 0) }
            c.sink.send(Response.ok(id: id, scheduler.statsFields() + [
                ("connections", .integer(Int64(connections.count))), ("connections_paused", .integer(Int64(paused))),
            ]))
        case .metrics:
            c.sink.send { writeMetricsReply(id: id, into: &$0) }
        case .retry(let which):
            scheduler.retry(which, id: id, from: r)
        case .discard(let which):
            scheduler.discard(which, id: id, from: r)
        case .schedules:
            c.sink.send(Response.ok(id: id, [("schedules", schedules.listing(showingJobs: mayAdminister(r.owner)))]))
        case .fleet:
            guard let fleet else { return c.sink.send(Response.error(id: id, notInFleet)) }
            let sink = c.sink
            sink.owe()
            fleet.listNodes { result in
                switch result {
                case .success(let fields): sink.settle { Response.ok(id: id, fields, into: &$0) }
                case .failure(let error): sink.settle { Response.error(id: id, error, into: &$0) }
                }
            }
        case .schedule(let command, let name):
            guard mayAdminister(r.owner) else {
                c.sink.send(Response.error(id: id, notAdministrator(r.owner, may: "\(command.rawValue) schedules")))
                return
            }
            switch schedules.handle(command, name: name) {
            case .success(let fields): c.sink.send(Response.ok(id: id, fields))
            case .failure(let error): c.sink.send(Response.error(id: id, error))
            }
        }
    }

    /// The refusal of a fleet request by a daemon without `[fleet]`.
    private var notInFleet: ProtocolError {
        ProtocolError(.fleetUnavailable, "this loopd is in no fleet: its configuration has no [fleet] table")
    }

    /// Whether `owner` may make requests that change the daemon's state
    /// (`DaemonConfig.mayAdminister`), by the configuration in force.
    func mayAdminister(_ owner: JobOwner) -> Bool {
        config.mayAdminister(uid: owner.uid, gid: owner.gid, supplementaryGroups: owner.groups,
                             daemonUID: scheduler.daemonUID)
    }

    /// The `forbidden` refusal of an administrator's request.
    private func notAdministrator(_ owner: JobOwner, may what: String) -> ProtocolError {
        ProtocolError(.forbidden, "uid \(owner.uid) may not \(what): not root, not loopd's own user, "
                      + "not in server.admin_users or server.admin_groups")
    }

    /// The media type of `metrics`' text: the Prometheus text exposition format.
    static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// `metrics`: the registry's exposition, its scrape-time figures set
    /// first, as one JSON string.
    private func writeMetricsReply(id: RequestID?, into out: inout [UInt8]) {
        scheduler.updateMetrics()
        scheduler.metrics.updateConnections(open: connections.count)
        var text: [UInt8] = []
        scheduler.metrics.render(into: &text)
        Response.beginOK(id: id, into: &out)
        Response.field("content_type", Server.metricsContentType, into: &out)
        Response.field("text", String(decoding: text, as: UTF8.self), into: &out)
        Response.end(into: &out)
    }

    /// `mode`: replies once the switch is in effect, so a job submitted
    /// after the reply is already judged by the new mode.
    private func switchMode(of name: String, to mode: String, id: RequestID?, from c: Connection) {
        guard let w = scheduler.queue(named: name)?.worker else {
            c.sink.send(Response.error(id: id, ProtocolError(.unknownWorker, "no worker named \"\(name)\"")))
            return
        }
        guard mode != "common", mode != "any" else {
            c.sink.send(Response.error(id: id, ProtocolError(.badRequest, "\"\(mode)\" is not a mode a worker can run")))
            return
        }
        let previous = w.mode
        let sink = c.sink
        sink.owe()
        let loop = self.loop
        w.setMode(mode) { [unowned self] in
            loop.perform(inModes: [.common]) {
                self.log(.notice, "worker \(name) switched from mode \(previous) to \(mode)", [(.worker, name)])
                sink.settle { Response.ok(id: id, [("worker", .string(name)), ("mode", .string(mode)), ("previous", .string(previous))], into: &$0) }
            }
        }
    }
}
