import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// The requests about fleet jobs, from any node: `submit` (with `fleet`),
/// `status`, `wait` and `cancel` of an `f-` id. The database is the truth;
/// this node only keeps who waits here for which job, and answers them when
/// `loopd_job_ended` names it. Waiting is LISTEN first, then read: the
/// channel is listened to for as long as the connection lives, a waiter is
/// registered before the job is read, and after a lost connection every
/// waited job is read again. Main thread only.
final class FleetJobs: @unchecked Sendable {
    private unowned let node: FleetNode
    private let scheduler: JobScheduler
    private let loop: Loop
    private let metrics: FleetMetrics
    /// Who waits here for which fleet job.
    private var waiters: [Int64: [Waiter]] = [:]
    private var nextSerial = 0
    /// Submits not yet inserted: those of this pass, and those that came
    /// while the previous insert was in flight (`insertPending`).
    private var pending: [PendingSubmit] = []
    private var insertScheduled = false
    /// An insert is in flight: submits wait for it, and go together after it.
    private var inserting = false

    private struct PendingSubmit {
        let s: SubmitRequest
        let ownerName: String
        let id: RequestID?
        let requester: Requester
    }

    private struct Waiter {
        enum Kind { case submit, wait, cancel, duplicate }
        let serial: Int
        let kind: Kind
        let sink: ReplySink
        let requestID: RequestID?
        var timer: LoopTimer?
    }

    init(node: FleetNode, scheduler: JobScheduler, loop: Loop, metrics: FleetMetrics) {
        self.node = node
        self.scheduler = scheduler
        self.loop = loop
        self.metrics = metrics
    }

    private var connection: PostgresConnection { node.connection }

    // MARK: submit

    /// A `submit` of a fleet job: checked as a local one is (the action
    /// must exist here and admit the client), then inserted; any node whose
    /// lanes fit it may run it.
    func submit(_ request: SubmitRequest, id: RequestID?, from r: Requester) {
        let s: SubmitRequest
        let ownerName: String
        do {
            (s, ownerName) = try checked(request, from: r)
        } catch {
            return r.sink.send { Response.error(id: id, error, into: &$0) }
        }
        guard node.isOnline else { return r.sink.send { Response.error(id: id, node.unavailableError, into: &$0) } }
        guard s.uniqueKey == nil else { return insert(s, ownerName: ownerName, id: id, from: r) }
        // The submits of one pass, and of every pass while an insert is in flight, are one statement: the
        // fleet's group commit, as the journal's for durable jobs.
        pending.append(PendingSubmit(s: s, ownerName: ownerName, id: id, requester: r))
        guard !insertScheduled, !inserting else { return }
        insertScheduled = true
        loop.perform(inModes: [.common]) { [unowned self] in
            insertScheduled = false
            insertPending()
        }
    }

    /// Inserts the waiting submits in one statement, and answers each.
    private func insertPending() {
        guard !inserting, !pending.isEmpty else { return }
        let batch = pending
        pending = []
        inserting = true
        func column(_ value: (PendingSubmit) -> String?) -> String { PostgresArray.text(batch.map(value)) }
        // Ids come from the identity's sequence in the order of the rows, which the ORDER BY fixes:
        // sorted, the returned ids are the batch's, in its order.
        let sql = """
            INSERT INTO loopd.jobs (action, args, owner_name, owner_uid, submitted_node, worker, node, mode, priority,
                                    timeout_ms, retries, retry_backoff_ms, run_at, expires_at, key)
            SELECT a.action, ARRAY(SELECT jsonb_array_elements_text(a.args::jsonb)), a.owner_name, a.owner_uid, $1,
                   a.worker, a.node, a.mode, a.priority, a.timeout_ms, a.retries, a.retry_backoff_ms,
                   now() + make_interval(secs => a.delay_ms::double precision / 1000),
                   now() + make_interval(secs => a.expires_ms::double precision / 1000), a.key
            FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::bigint[],
                        $10::bigint[], $11::integer[], $12::bigint[], $13::bigint[], $14::bigint[], $15::text[])
                 WITH ORDINALITY AS a(action, args, owner_name, owner_uid, worker, node, mode, priority, timeout_ms, retries,
                                      retry_backoff_ms, delay_ms, expires_ms, key, n)
            ORDER BY a.n
            RETURNING id
            """
        let parameters: [String?] = [
            node.name, column { $0.s.action }, column { JSON.array($0.s.args.map { .string($0) }).serialized() },
            column { $0.ownerName }, column { String($0.requester.owner.uid) }, column { $0.s.worker }, column { $0.s.node },
            column { $0.s.mode }, column { String($0.s.priority) }, column { $0.s.timeoutMs.map(String.init) },
            column { String($0.s.retries) }, column { String($0.s.retryBackoffMs) }, column { String($0.s.delayMs) },
            column { $0.s.expiresInMs.map(String.init) }, column { $0.s.key },
        ]
        connection.query(sql, parameters) { [unowned self] result in
            inserting = false
            switch result {
            case .failure(let error):
                for p in batch { p.requester.sink.send { Response.error(id: p.id, Self.notSubmitted(error), into: &$0) } }
            case .success(let rows):
                let ids = rows.rows.indices.compactMap { rows.integer($0, "id") }.sorted()
                for (p, jobID) in zip(batch, ids) { accepted(jobID, wait: p.s.wait, id: p.id, from: p.requester) }
            }
            insertPending()
        }
    }

    /// Answers a submit whose job now exists: at once with its id, or, waited, at its end.
    private func accepted(_ jobID: Int64, wait: Bool, id: RequestID?, from r: Requester) {
        metrics.submittedJob()
        if wait {
            // An end can only be announced after this insert's result, which comes first on the connection.
            r.sink.owe()
            add(.submit, on: jobID, sink: r.sink, requestID: id)
        } else {
            r.sink.send(Response.ok(id: id, [("job", .string(FleetJobID.text(jobID))), ("state", .string("queued")),
                                             ("fleet", true)]))
        }
    }

    /// The refusal of a submit whose insert failed: with a lost connection, the job may exist.
    private static func notSubmitted(_ error: PostgresError) -> ProtocolError {
        if case .unavailable(let why) = error {
            return ProtocolError(.fleetUnavailable, "the connection to the fleet's database was lost before the job's id "
                                 + "came back, so it may or may not exist: \(why)")
        }
        return ProtocolError(.fleetUnavailable, "the job was not submitted: \(error)")
    }

    /// Inserts the job; with a `unique_key` the owner already has, answers with that job instead (`duplicate`).
    private func insert(_ s: SubmitRequest, ownerName: String, id: RequestID?, from r: Requester, again: Bool = false) {
        // With a unique key the insert may find the owner's job instead: the unique index decides, whatever the node.
        let sql = """
            WITH made AS (
                INSERT INTO loopd.jobs (action, args, owner_name, owner_uid, submitted_node, worker, node, mode, priority,
                                        timeout_ms, retries, retry_backoff_ms, run_at, expires_at, key, unique_key)
                VALUES ($1, $2::text[], $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                        now() + make_interval(secs => $13::double precision / 1000),
                        now() + make_interval(secs => $14::double precision / 1000), $15, $16)
                ON CONFLICT (owner_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
                RETURNING id)
            SELECT id, false AS duplicate FROM made
            UNION ALL
            SELECT j.id, true FROM loopd.jobs j
            WHERE $16::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM made) AND j.owner_name = $3 AND j.unique_key = $16
            """
        let parameters: [String?] = [
            s.action, PostgresArray.text(s.args), ownerName, String(r.owner.uid), node.name, s.worker, s.node, s.mode,
            String(s.priority), s.timeoutMs.map(String.init), String(s.retries), String(s.retryBackoffMs),
            String(s.delayMs), s.expiresInMs.map(String.init), s.key, s.uniqueKey,
        ]
        connection.query(sql, parameters) { [unowned self] result in
            switch result {
            case .failure(let error):
                r.sink.send { Response.error(id: id, Self.notSubmitted(error), into: &$0) }
            case .success(let rows):
                guard let jobID = rows.integer(0, "id") else {
                    // The conflicting job is not in this statement's snapshot: a racing submit's, committed while
                    // this insert waited for it, or one deleted meanwhile. Once more, with a fresh snapshot.
                    if !again { return insert(s, ownerName: ownerName, id: id, from: r, again: true) }
                    return r.sink.send { Response.error(id: id, ProtocolError(.fleetUnavailable, "the job was not submitted: "
                        + "its unique_key's job kept disappearing"), into: &$0) }
                }
                if rows.value(0, "duplicate") == "t" {
                    return duplicate(jobID, wait: s.wait, id: id, from: r)
                }
                accepted(jobID, wait: s.wait, id: id, from: r)
            }
        }
    }

    /// `s` within the limits, and its owner's name; or the refusal a local submit would get.
    private func checked(_ s: SubmitRequest, from r: Requester) throws(ProtocolError) -> (SubmitRequest, String) {
        guard scheduler.isAccepting else { throw ProtocolError(.shuttingDown, "loopd is stopping and accepts no new jobs") }
        if let key = s.uniqueKey, key.utf8.count > scheduler.config.limits.maxUniqueKeyBytes {
            throw ProtocolError(.badRequest, "\"unique_key\" is \(key.utf8.count) bytes; at most \(scheduler.config.limits.maxUniqueKeyBytes)")
        }
        guard let action = scheduler.actions[s.action] else {
            throw ProtocolError(.unknownAction, "no action named \"\(s.action)\" on node \(node.name)")
        }
        let owner = r.owner
        guard scheduler.config.permits(action: s.action, uid: owner.uid, gid: owner.gid, supplementaryGroups: owner.groups,
                                       daemonUID: scheduler.daemonUID) else {
            throw ProtocolError(.forbidden, "uid \(owner.uid) may not run action \"\(s.action)\"")
        }
        try action.validate(args: s.args)
        var limited = s
        try scheduler.applySchedulingLimits(to: &limited)
        try scheduler.checkRetryLimits(limited)
        guard let ownerName = userName(r) else {
            throw ProtocolError(.forbidden, "uid \(owner.uid) has no user name on node \(node.name): "
                                + "a fleet job belongs to a user name, the same on every node")
        }
        return (limited, ownerName)
    }

    /// A submit whose `unique_key` named a job the owner has: that job,
    /// `duplicate`; waited for, its end.
    private func duplicate(_ jobID: Int64, wait: Bool, id: RequestID?, from r: Requester) {
        r.sink.owe()
        let serial = wait ? add(.duplicate, on: jobID, sink: r.sink, requestID: id) : nil
        read(jobID, for: r, id: id, owed: true, waiting: serial) { [unowned self] row in
            if let serial {
                if row.hasEnded { take(serial, of: jobID).map { settle($0, row) } }
                return
            }
            r.sink.settle { Response.ok(id: id, row.replyFields + [("duplicate", true)], into: &$0) }
        }
    }

    // MARK: status, wait, cancel

    /// `status` of a fleet job.
    func status(_ jobID: Int64, id: RequestID?, from r: Requester) {
        read(jobID, for: r, id: id) { row in
            r.sink.send(Response.ok(id: id, row.statusFields))
        }
    }

    /// `wait`: replies when the job has ended, or with its state once `timeoutMs` passed.
    func wait(_ jobID: Int64, timeoutMs: Int64?, id: RequestID?, from r: Requester) {
        guard node.isOnline else { return r.sink.send { Response.error(id: id, node.unavailableError, into: &$0) } }
        r.sink.owe()
        let serial = add(.wait, on: jobID, sink: r.sink, requestID: id)
        read(jobID, for: r, id: id, owed: true, waiting: serial) { [unowned self] row in
            if row.hasEnded {
                take(serial, of: jobID).map { settle($0, row) }
                return
            }
            guard let timeoutMs else { return }
            let timer = LoopTimer(after: .milliseconds(timeoutMs)) { [unowned self] _ in
                guard take(serial, of: jobID) != nil else { return }
                read(jobID, for: r, id: id, owed: true) { row in
                    r.sink.settle { Response.ok(id: id, row.replyFields, into: &$0) }
                }
            }
            setTimer(timer, serial: serial, of: jobID)
            loop.add(timer, forMode: .common)
        }
    }

    /// `cancel`: a queued job ends `cancelled` now; a running one is
    /// stopped by its node, and the reply comes once it has ended.
    func cancel(_ jobID: Int64, id: RequestID?, from r: Requester) {
        guard node.isOnline else { return r.sink.send { Response.error(id: id, node.unavailableError, into: &$0) } }
        let everyone = scheduler.seesEveryJob(r)
        let name = userName(r) ?? ""
        let sql = """
            WITH old AS (SELECT id, state FROM loopd.jobs WHERE id = $1 AND (owner_name = $2 OR $3::boolean) FOR UPDATE)
            UPDATE loopd.jobs j SET
                state = CASE WHEN old.state = 'queued' THEN 'cancelled' ELSE j.state END,
                finished_at = CASE WHEN old.state = 'queued' THEN now() ELSE j.finished_at END,
                error_code = CASE WHEN old.state = 'queued' THEN 'cancelled' ELSE j.error_code END,
                error_message = CASE WHEN old.state = 'queued' THEN 'job f-' || j.id || ' was cancelled by ' || $4 || ' before it ran'
                                ELSE j.error_message END,
                cancel_requested_by = CASE WHEN old.state = 'running' THEN $4 ELSE j.cancel_requested_by END
            FROM old WHERE j.id = old.id
            RETURNING old.state AS was, j.state, j.started_at IS NOT NULL AS started
            """
        r.sink.owe()
        connection.query(sql, [String(jobID), name, everyone ? "true" : "false", "\(name) (uid \(r.owner.uid))"]) { [unowned self] result in
            switch result {
            case .failure(let error):
                r.sink.settle { Response.error(id: id, ProtocolError(.fleetUnavailable, "\(error)"), into: &$0) }
            case .success(let rows) where rows.rows.isEmpty:
                r.sink.settle { Response.error(id: id, JobScheduler.unknownJob, into: &$0) }
            case .success(let rows):
                let was = rows.value(0, "was") ?? ""
                if was == "running" {
                    // Settled by the end: registered now, read again in case it ended meanwhile.
                    let serial = add(.cancel, on: jobID, sink: r.sink, requestID: id)
                    read(jobID, for: r, id: id, owed: true, waiting: serial) { [unowned self] row in
                        if row.hasEnded { take(serial, of: jobID).map { settle($0, row) } }
                    }
                    return
                }
                let fields: [(String, JSON)] = [
                    ("job", .string(FleetJobID.text(jobID))), ("cancelled", .bool(was == "queued")),
                    ("state", .string(rows.value(0, "state") ?? "")), ("started", .bool(rows.value(0, "started") == "t")),
                ]
                r.sink.settle { Response.ok(id: id, fields, into: &$0) }
            }
        }
    }

    /// `jobs` with `fleet`: a page of the fleet's jobs `r` may see (its
    /// user name's; every one for an administrator), oldest submission
    /// first. A fleet job is `queued` until it runs, delayed or held alike,
    /// so `delayed` and `held` select queued ones. The cursor is the last
    /// job's id.
    func list(_ query: JobsQuery, id: RequestID?, from r: Requester) {
        page(query, for: r) { result in
            switch result {
            case .failure(let error):
                r.sink.send { Response.error(id: id, error, into: &$0) }
            case .success(let (rows, more)):
                let next: JSON = more ? .string(rows[rows.count - 1].id) : .null
                r.sink.send { Response.ok(id: id, [("jobs", .array(rows.map { .object($0.listFields) })), ("next_cursor", next)],
                                          into: &$0) }
            }
        }
    }

    /// A page of the fleet's jobs `r` may see that match `query`, and whether more do.
    private func page(_ query: JobsQuery, for r: Requester,
                      _ done: @escaping (Result<(rows: [FleetJobRow], more: Bool), ProtocolError>) -> Void) {
        var after: Int64 = 0
        if let cursor = query.cursor {
            guard let last = FleetJobID.parse(cursor) else {
                return done(.failure(ProtocolError(.badRequest, "\"cursor\" is not one a fleet listing gave out")))
            }
            after = last
        }
        guard node.isOnline else { return done(.failure(node.unavailableError)) }
        let states = query.states.map { list in
            Set(list.map { [.delayed, .held].contains($0) ? JobState.queued.rawValue : $0.rawValue }).sorted()
        }
        let sql = """
            SELECT \(FleetJobRow.columns) FROM loopd.jobs
            WHERE ($1::boolean OR owner_name = $2) AND ($3::text[] IS NULL OR state = ANY($3::text[]))
              AND ($4::text IS NULL OR coalesce(lane, worker) = $4) AND ($5::text IS NULL OR action = $5)
              AND ($6::bigint IS NULL OR submitted_at >= to_timestamp($6::double precision / 1000)) AND id > $7
            ORDER BY id LIMIT $8
            """
        let parameters: [String?] = [
            scheduler.seesEveryJob(r) ? "true" : "false", userName(r) ?? "", states.map { PostgresArray.text($0) },
            query.worker, query.action, query.submittedSinceUnixMs.map(String.init), String(after), String(query.limit + 1),
        ]
        connection.query(sql, parameters) { result in
            switch result {
            case .failure(let error):
                done(.failure(ProtocolError(.fleetUnavailable, "\(error)")))
            case .success(let rows):
                let page = rows.rows.indices.prefix(query.limit).map { FleetJobRow(rows, $0) }
                done(.success((page, rows.rows.count > query.limit)))
            }
        }
    }

    /// `jobs` with `with_fleet`: this host's jobs and the fleet's in one
    /// list, by submission time (this host's first on a tie). The cursor
    /// is the two listings' cursors, `HOST~FLEET`: each empty before its
    /// first job, `=` once it has none left.
    func listWithHost(_ query: JobsQuery, id: RequestID?, from r: Requester) {
        var hostQuery = query, fleetQuery = query
        var hostDone = false, fleetDone = false
        if let cursor = query.cursor {
            let parts = cursor.split(separator: "~", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else {
                return r.sink.send { Response.error(id: id, ProtocolError(.badRequest, "\"cursor\" is not one a listing with the fleet gave out"), into: &$0) }
            }
            func part(_ text: String) -> (cursor: String?, done: Bool) {
                text == "=" ? (nil, true) : (text.isEmpty ? nil : text, false)
            }
            (hostQuery.cursor, hostDone) = part(parts[0])
            (fleetQuery.cursor, fleetDone) = part(parts[1])
        }
        let host: (jobs: [Job], more: Bool)
        switch hostDone ? .success(([], false)) : scheduler.page(hostQuery, for: r, besideFleet: true) {
        case .failure(let error): return r.sink.send { Response.error(id: id, error, into: &$0) }
        case .success(let found): host = found
        }
        let merge = { [unowned self] (fleet: (rows: [FleetJobRow], more: Bool)) in
            var entries: [JSON] = []
            var i = 0, j = 0
            while entries.count < query.limit, i < host.jobs.count || j < fleet.rows.count {
                if j == fleet.rows.count || (i < host.jobs.count && host.jobs[i].submittedAtUnixMs <= fleet.rows[j].submittedMs) {
                    entries.append(.object(JobStatus.fields(host.jobs[i], includeResult: false)))
                    i += 1
                } else {
                    entries.append(.object(fleet.rows[j].listFields))
                    j += 1
                }
            }
            // Each listing goes on after the last of its jobs this page took, from where it was if it took none.
            let hostNext = i < host.jobs.count || host.more
                ? (i == 0 ? hostQuery.cursor ?? "" : scheduler.cursor(after: host.jobs[i - 1])) : "="
            let fleetNext = j < fleet.rows.count || fleet.more
                ? (j == 0 ? fleetQuery.cursor ?? "" : fleet.rows[j - 1].id) : "="
            let next: JSON = hostNext == "=" && fleetNext == "=" ? .null : .string(hostNext + "~" + fleetNext)
            r.sink.send { Response.ok(id: id, [("jobs", .array(entries)), ("next_cursor", next)], into: &$0) }
        }
        guard !fleetDone else { return merge(([], false)) }
        page(fleetQuery, for: r) { result in
            switch result {
            case .failure(let error): r.sink.send { Response.error(id: id, error, into: &$0) }
            case .success(let fleet): merge(fleet)
            }
        }
    }

    /// Reads the job for `r`; replies itself when it cannot (unknown, not
    /// `r`'s, unreachable), settling the reply when it was `owed`.
    private func read(_ jobID: Int64, for r: Requester, id: RequestID?, owed: Bool = false, waiting serial: Int? = nil,
                      _ found: @escaping (FleetJobRow) -> Void) {
        let refuse = { [unowned self] (error: ProtocolError) in
            if let serial { _ = take(serial, of: jobID) }
            if owed { r.sink.settle { Response.error(id: id, error, into: &$0) } } else { r.sink.send { Response.error(id: id, error, into: &$0) } }
        }
        guard node.isOnline else { return refuse(node.unavailableError) }
        connection.query(FleetJobRow.select, [String(jobID)]) { [unowned self] result in
            switch result {
            case .failure(let error):
                refuse(ProtocolError(.fleetUnavailable, "\(error)"))
            case .success(let rows):
                guard !rows.rows.isEmpty else { return refuse(JobScheduler.unknownJob) }
                let row = FleetJobRow(rows, 0)
                // By name: a uid means another user on another host.
                guard scheduler.seesEveryJob(r) || row.ownerName == userName(r) else {
                    return refuse(JobScheduler.unknownJob)
                }
                found(row)
            }
        }
    }

    private func userName(_ r: Requester) -> String? {
        (try? UserDatabase.account(ofUID: r.owner.uid).get())?.name
    }

    // MARK: Waiters

    @discardableResult
    private func add(_ kind: Waiter.Kind, on jobID: Int64, sink: ReplySink, requestID: RequestID?) -> Int {
        nextSerial += 1
        waiters[jobID, default: []].append(Waiter(serial: nextSerial, kind: kind, sink: sink, requestID: requestID))
        return nextSerial
    }

    private func take(_ serial: Int, of jobID: Int64) -> Waiter? {
        guard var list = waiters[jobID], let i = list.firstIndex(where: { $0.serial == serial }) else { return nil }
        let waiter = list.remove(at: i)
        waiters[jobID] = list.isEmpty ? nil : list
        waiter.timer?.invalidate()
        return waiter
    }

    private func setTimer(_ timer: LoopTimer, serial: Int, of jobID: Int64) {
        guard let i = waiters[jobID]?.firstIndex(where: { $0.serial == serial }) else { return timer.invalidate() }
        waiters[jobID]![i].timer = timer
    }

    private func settle(_ waiter: Waiter, _ row: FleetJobRow) {
        waiter.sink.settle { out in
            switch waiter.kind {
            case .submit, .wait:
                EndedJobView(row).writeReply(requestID: waiter.requestID, into: &out)
            case .duplicate:
                EndedJobView(row).writeReply(requestID: waiter.requestID, duplicate: true, into: &out)
            case .cancel:
                Response.ok(id: waiter.requestID, [
                    ("job", .string(row.id)), ("cancelled", .bool(row.state == JobState.cancelled.rawValue)),
                    ("state", .string(row.state)), ("started", .bool(row.startedMs != nil)),
                ], into: &out)
            }
        }
    }

    /// `loopd_job_ended`: answers whoever waits here for the job.
    func jobEnded(_ jobID: Int64) {
        guard waiters[jobID] != nil else { return }
        connection.query(FleetJobRow.select, [String(jobID)]) { [unowned self] result in
            guard case .success(let rows) = result, !rows.rows.isEmpty else { return }
            let row = FleetJobRow(rows, 0)
            guard row.hasEnded, let list = waiters.removeValue(forKey: jobID) else { return }
            for waiter in list {
                waiter.timer?.invalidate()
                settle(waiter, row)
            }
        }
    }

    /// After a reconnect: what ended while the channel was not listened to.
    func connectedAgain() {
        for jobID in waiters.keys { jobEnded(jobID) }
    }
}

private extension SubmitRequest {
    /// The worker a `worker` placement names, as `loopd.jobs.worker` holds it.
    var worker: String? {
        if case .worker(let name) = placement { name } else { nil }
    }

    /// The key of a `key` placement, as `loopd.jobs.key` holds it.
    var key: String? {
        if case .key(let key) = placement { key } else { nil }
    }
}
