import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// An attempt of a fleet job this node claimed, as the local job running it
/// carries it (`JobSubmitter.fleetRun`). Immutable.
final class FleetRun: Sendable {
    /// The fleet job's id (`loopd.jobs.id`).
    let jobID: Int64
    /// Which attempt this node claimed: its finish counts only while the row still says so.
    let attempt: Int
    /// The fleet job's `retry_backoff_ms`, for the wait before its next attempt.
    let retryBackoffMs: Int64

    init(jobID: Int64, attempt: Int, retryBackoffMs: Int64) {
        self.jobID = jobID
        self.attempt = attempt
        self.retryBackoffMs = retryBackoffMs
    }
}

/// What runs fleet jobs on this node: claims queued jobs for its idle lanes
/// (`FOR UPDATE SKIP LOCKED`, as many as lanes are idle), runs each as a
/// local job on its lane, writes the ends back in one statement per pass
/// (the fleet's group commit), renews the leases of what runs here at each
/// heartbeat, and rescues the jobs of nodes whose leases ran out.
///
/// It learns of new work by LISTEN (`loopd_jobs`, folded into one claim per
/// pass), when a lane falls idle, at the next due delayed job, and by a poll
/// every heartbeat interval in case a notification was lost with a
/// connection. Fencing: an end is written only where the row still names
/// this node, this run of it and this attempt; a node cut off past its
/// lease finds its late ends refused, and logs them. Main thread only.
final class FleetRunner: @unchecked Sendable {
    private unowned let node: FleetNode
    private let scheduler: JobScheduler
    private let loop: Loop
    private let log: DaemonLogger
    private let metrics: FleetMetrics
    /// The local jobs running fleet jobs here, by fleet job id.
    private var carriers: [Int64: Job] = [:]
    /// Ends not yet written (kept across a lost connection).
    private var finishes: [Finish] = []
    private var flushScheduled = false
    private var flushing = false
    /// Told once every end recorded so far is written (or cannot be, offline).
    private var flushWaiters: [() -> Void] = []
    private var claiming = false
    private var claimWanted = false
    /// The last claim got all it asked for: there is a backlog, so the next
    /// one takes a few jobs per idle lane (`backlogJobsPerLane`).
    private var backlog = false
    /// Jobs claimed per idle lane while there is a backlog: fewer
    /// statements per job. They queue on the node's fitting lanes, under
    /// its leases; a node may hold that many more than it runs at once.
    static let backlogJobsPerLane = 4
    private var claimScheduled = false
    /// Wakes the node when the earliest delayed job falls due.
    private var dueTimer: LoopTimer?
    private var lastPrune = ContinuousClock.now - .seconds(3600)

    private struct Finish {
        let jobID: Int64
        let attempt: Int
        let state: String
        let result: String
        let errorCode: String?
        let errorMessage: String?
        let startedMs: Int64?
        /// When it ended here (this node's clock, as `startedMs`).
        let endedMs: Int64
        let backoffMs: Int64
        /// The worker that ran it here.
        let lane: String?
    }

    init(node: FleetNode, scheduler: JobScheduler, loop: Loop, log: DaemonLogger, metrics: FleetMetrics) {
        self.node = node
        self.scheduler = scheduler
        self.loop = loop
        self.log = log
        self.metrics = metrics
        scheduler.fleetEnded = { [unowned self] job, run in ended(job, run) }
        scheduler.laneIdle = { [unowned self] _ in wantClaim() }
    }

    /// The database's now as RFC 3339 in UTC with milliseconds, as every time in a reply is written.
    static let nowText = #"to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#

    private var connection: PostgresConnection { node.connection }
    private var lease: String { String(node.config.deadAfterMs) }

    // MARK: Claiming

    /// Asks for a claim at the end of this pass: many reasons in one pass make one claim.
    func wantClaim() {
        claimWanted = true
        guard !claimScheduled else { return }
        claimScheduled = true
        loop.perform(inModes: [.common]) { [unowned self] in
            claimScheduled = false
            claim()
        }
    }

    /// The lanes that run nothing and hold nothing: `(name, mode, automatic)`.
    private func idleLanes() -> [(String, String, Bool)] {
        guard scheduler.isAccepting else { return [] }
        return scheduler.queues.filter { $0.outstanding == 0 }.map { q in
            (q.worker.name, q.worker.mode, q.worker.placement == .auto)
        }
    }

    private func claim() {
        guard claimWanted, !claiming, node.isOnline else { return }
        let lanes = idleLanes()
        guard !lanes.isEmpty else { return }
        claimWanted = false
        claiming = true
        let asked = backlog ? lanes.count * FleetRunner.backlogJobsPerLane : lanes.count
        let sql = """
            SELECT id, action, args, owner_name, worker, mode, priority, timeout_ms, attempt, retry_backoff_ms,
                   (extract(epoch FROM submitted_at) * 1000)::bigint AS submitted_ms
            FROM loopd.claim($1, $2, $3::text[], $4::text[], $5::boolean[], $6::text[], $7, $8)
            """
        let actions = scheduler.actions.keys.sorted()
        connection.query(sql, [node.name, String(node.incarnation), PostgresArray.text(lanes.map(\.0)),
                               PostgresArray.text(lanes.map(\.1)), PostgresArray.bool(lanes.map(\.2)),
                               PostgresArray.text(actions), String(asked), lease]) { [unowned self] result in
            claiming = false
            switch result {
            case .failure(.unavailable):
                claimWanted = true  // again once connected
            case .failure(let error):
                log(.warning, "fleet: claiming jobs failed: \(error)")
            case .success(let rows):
                metrics.claimed(rows.rows.count)
                var lanes = lanes
                for row in rows.rows.indices { start(rows, row, lanes: &lanes) }
                backlog = rows.rows.count == asked
                if backlog {
                    wantClaim()  // every idle lane got one: more may wait
                } else {
                    armDue()
                }
            }
            if claimWanted { claim() }
        }
    }

    /// Runs a claimed row as a local job on an idle lane that fits it (taken from `lanes`).
    private func start(_ rows: PostgresRows, _ row: Int, lanes: inout [(String, String, Bool)]) {
        func text(_ column: String) -> String? { rows.value(row, column) }
        func integer(_ column: String) -> Int64? { rows.integer(row, column) }
        guard let jobID = integer("id"), let attempt = integer("attempt") else { return }
        let run = FleetRun(jobID: jobID, attempt: Int(attempt), retryBackoffMs: integer("retry_backoff_ms") ?? 0)
        let worker = text("worker")
        let mode = text("mode")
        func fits(_ name: String, _ laneMode: String, _ automatic: Bool) -> Bool {
            (worker == name || (worker == nil && automatic)) && ((mode ?? "default") == laneMode || mode == "common")
        }
        // An idle lane that fits; else (an earlier row of the batch took it: the claim checks each job against
        // the idle lanes, not against distinct ones) the least loaded lane that fits, where it queues; else
        // (modes switched meanwhile) the lane it names or the first automatic one, where it is held.
        let lane: String
        if let i = lanes.firstIndex(where: { fits($0.0, $0.1, $0.2) }) {
            lane = lanes.remove(at: i).0
        } else if let q = scheduler.queues.filter({ fits($0.worker.name, $0.worker.mode, $0.worker.placement == .auto) })
                    .min(by: { $0.outstanding < $1.outstanding }) {
            lane = q.worker.name
        } else {
            lane = worker ?? scheduler.queues.first { $0.worker.placement == .auto }?.worker.name ?? ""
        }
        let ownerName = text("owner_name") ?? ""
        let owner: JobOwner
        switch UserDatabase.account(ofUser: ownerName) {
        case .success(let account):
            owner = JobOwner(uid: account.uid, gid: account.gid,
                             groups: UserDatabase.groups(ofUser: account.name, primary: account.gid))
        case .failure:
            return finish(run, state: JobState.failed.rawValue, result: "{}", error: ProtocolError(
                .jobFailed, "node \(node.name) has no user named \"\(ownerName)\" to run the job as its owner"), startedMs: nil)
        }
        var s = SubmitRequest(action: text("action") ?? "", args: PostgresArray.parseText(text("args") ?? "{}"),
                              placement: .worker(lane), wait: false, timeoutMs: integer("timeout_ms"), mode: mode,
                              priority: UInt32(clamping: integer("priority") ?? Int64(SubmitRequest.defaultPriority)))
        s.fleet = true
        do {
            let job = try scheduler.accept(s, submitter: JobSubmitter(owner, fleetRun: run),
                                           jobID: FleetJobID.local(jobID, attempt: run.attempt),
                                           submittedAt: integer("submitted_ms") ?? unixMilliseconds())
            carriers[jobID] = job
            scheduler.dispatch(job, ack: nil)
        } catch {
            finish(run, state: JobState.failed.rawValue, result: "{}", error: error, startedMs: nil)
        }
    }

    /// Sets a timer for the earliest delayed job, so a delay ends on time without a poll.
    private func armDue() {
        let sql = """
            SELECT (extract(epoch FROM min(run_at) - now()) * 1000)::bigint AS due_ms
            FROM loopd.jobs WHERE state = 'queued' AND run_at > now() AND (node IS NULL OR node = $1)
            """
        connection.query(sql, [node.name]) { [unowned self] result in
            guard case .success(let rows) = result, let ms = rows.integer(0, "due_ms") else { return }
            dueTimer?.invalidate()
            let t = LoopTimer(after: .milliseconds(max(ms, 0) + 1)) { [unowned self] _ in
                dueTimer = nil
                wantClaim()
            }
            dueTimer = t
            loop.add(t, forMode: .common)
        }
    }

    // MARK: Ends

    /// A local job that ran a fleet job's attempt ended.
    private func ended(_ job: Job, _ run: FleetRun) {
        if carriers[run.jobID] === job { carriers[run.jobID] = nil }
        let end: Job.End
        if case .ended(let e) = job.state { end = e } else { return }
        finish(run, state: end.protocolState.rawValue, result: (job.result ?? .object([])).serialized(), error: job.error,
               startedMs: job.startedAtUnixMs == 0 ? nil : job.startedAtUnixMs, endedMs: job.endedAtUnixMs,
               lane: job.worker.name)
    }

    private func finish(_ run: FleetRun, state: String, result: String, error: ProtocolError?, startedMs: Int64?,
                        endedMs: Int64 = unixMilliseconds(), lane: String? = nil) {
        let backoff = RetryBackoff.delay(afterAttempt: run.attempt, baseMs: run.retryBackoffMs,
                                         capMs: scheduler.config.limits.maxRetryBackoffMs, jitter: scheduler.retryJitter)
        finishes.append(Finish(jobID: run.jobID, attempt: run.attempt, state: state, result: result,
                               errorCode: error?.code.rawValue, errorMessage: error?.message, startedMs: startedMs,
                               endedMs: endedMs, backoffMs: backoff, lane: lane))
        scheduleFlush()
    }

    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.perform(inModes: [.common]) { [unowned self] in
            flushScheduled = false
            flush()
        }
    }

    /// Writes every end recorded so far in one statement; the rows that no
    /// longer name this node's attempt are fenced. `done` runs once no end
    /// recorded before the call waits any more (written, fenced, or kept
    /// for a connection that is gone).
    func flush(then done: (() -> Void)? = nil) {
        if let done { flushWaiters.append(done) }
        guard !flushing else { return }  // the statement in flight flushes again when it completes
        guard !finishes.isEmpty, node.isOnline else {
            let waiters = flushWaiters
            flushWaiters = []
            for waiter in waiters { waiter() }
            return
        }
        let batch = finishes
        finishes = []
        flushing = true
        let retried = "f.state IN ('failed', 'timed_out') AND j.attempt <= j.retries"
        let sql = """
            WITH f AS (SELECT * FROM unnest($3::bigint[], $4::integer[], $5::text[], $6::text[], $7::text[], $8::text[],
                                            $9::bigint[], $10::bigint[], $11::text[], $12::bigint[])
                       AS f(id, attempt, state, result, error_code, error_message, started_ms, backoff_ms, lane, ended_ms))
            UPDATE loopd.jobs j SET
                state = CASE WHEN \(retried) THEN 'queued' ELSE f.state END,
                run_at = CASE WHEN \(retried) THEN now() + make_interval(secs => f.backoff_ms::double precision / 1000)
                              ELSE j.run_at END,
                finished_at = CASE WHEN \(retried) THEN NULL ELSE to_timestamp(f.ended_ms::double precision / 1000) END,
                started_at = coalesce(to_timestamp(f.started_ms::double precision / 1000), j.started_at),
                lane = coalesce(f.lane, j.lane),
                result = f.result::jsonb, error_code = f.error_code, error_message = f.error_message,
                attempts = CASE WHEN f.state = 'completed' THEN j.attempts ELSE j.attempts || jsonb_build_array(jsonb_build_object(
                    'attempt', j.attempt, 'node', $1::text, 'code', f.error_code, 'message', f.error_message,
                    'finished_at', \(FleetRunner.nowText))) END,
                lease_until = NULL
            FROM f
            WHERE j.id = f.id AND j.attempt = f.attempt AND j.claimed_by = $1 AND j.claimed_incarnation = $2
              AND j.state = 'running'
            RETURNING j.id
            """
        let parameters: [String?] = [
            node.name, String(node.incarnation),
            PostgresArray.text(batch.map { String($0.jobID) }), PostgresArray.text(batch.map { String($0.attempt) }),
            PostgresArray.text(batch.map(\.state)), PostgresArray.text(batch.map(\.result)),
            PostgresArray.text(batch.map(\.errorCode)), PostgresArray.text(batch.map(\.errorMessage)),
            PostgresArray.text(batch.map { $0.startedMs.map(String.init) }), PostgresArray.text(batch.map { String($0.backoffMs) }),
            PostgresArray.text(batch.map(\.lane)), PostgresArray.text(batch.map { String($0.endedMs) }),
        ]
        connection.query(sql, parameters) { [unowned self] result in
            flushing = false
            switch result {
            case .failure(.unavailable):
                finishes = batch + finishes  // written once the database is back, or fenced then
            case .failure(let error):
                log(.error, "fleet: writing \(batch.count) job ends failed, and they are dropped: \(error)")
            case .success(let rows):
                let written = Set(rows.rows.indices.compactMap { rows.integer($0, "id") })
                for f in batch where !written.contains(f.jobID) {
                    metrics.fenced()
                    log(.warning, "fleet: the end of job \(FleetJobID.text(f.jobID)) attempt \(f.attempt) (\(f.state)) was refused: "
                        + "the job was rescued or taken over while this node could not reach the database",
                        [(.jobID, FleetJobID.text(f.jobID))])
                }
            }
            flush()
        }
    }

    // MARK: Leases, rescues, expiry, retention

    /// At each heartbeat, once the node's own row is renewed.
    func beat() {
        renewLeases()
        if node.mayJudgeOthers { rescue() }
        expire()
        if ContinuousClock.now - lastPrune > .seconds(60) {
            lastPrune = .now
            prune()
        }
        wantClaim()  // the poll, in case a notification was lost
    }

    private func renewLeases() {
        guard !carriers.isEmpty else { return }
        let sql = """
            UPDATE loopd.jobs SET lease_until = now() + make_interval(secs => $3::double precision / 1000)
            WHERE claimed_by = $1 AND claimed_incarnation = $2 AND state = 'running'
            """
        connection.query(sql, [node.name, String(node.incarnation), lease]) { _ in }
    }

    /// Jobs whose lease ran out (their node died, was cut off, or restarted)
    /// go back to the queue, counting the attempt, or fail when out of attempts.
    /// `previousRunsOf` rescues at once what an earlier run of this node left running.
    func rescue(previousRunsOf name: String? = nil) {
        let which = name == nil ? "j.lease_until < now()" : "j.claimed_by = $1 AND j.claimed_incarnation <> $2::bigint"
        let sql = """
            UPDATE loopd.jobs j SET
                state = CASE WHEN j.attempt <= j.retries THEN 'queued' ELSE 'failed' END,
                finished_at = CASE WHEN j.attempt <= j.retries THEN NULL ELSE now() END,
                error_code = 'job_failed',
                error_message = 'node ' || j.claimed_by || ' was lost while it ran attempt ' || j.attempt,
                attempts = j.attempts || jsonb_build_array(jsonb_build_object(
                    'attempt', j.attempt, 'node', j.claimed_by, 'code', 'job_failed',
                    'message', 'node ' || j.claimed_by || ' was lost while it ran attempt ' || j.attempt, 'finished_at', \(FleetRunner.nowText))),
                lease_until = NULL
            WHERE j.state = 'running' AND \(which)
            RETURNING j.id, j.claimed_by, j.state, j.attempt
            """
        connection.query(sql, name.map { [$0, String(node.incarnation)] } ?? []) { [unowned self] result in
            guard case .success(let rows) = result else { return }
            for row in rows.rows.indices {
                let id = rows.integer(row, "id").map(FleetJobID.text) ?? "?"
                let from = rows.value(row, "claimed_by") ?? "?"
                let state = rows.value(row, "state") ?? "?"
                metrics.rescued()
                log(.warning, "fleet: job \(id) rescued from node \(from), whose lease ran out in attempt "
                    + "\(rows.value(row, "attempt") ?? "?"): " + (state == "queued" ? "queued again" : "failed, out of attempts"),
                    [(.jobID, id), (.fleetNode, from)], id: .fleetRescue)
            }
            if !rows.rows.isEmpty { wantClaim() }
        }
    }

    private func expire() {
        let sql = """
            UPDATE loopd.jobs SET state = 'expired', finished_at = now(), error_code = 'expired',
                error_message = 'job f-' || id || ' had not started when its expires_in_ms passed'
            WHERE state = 'queued' AND expires_at <= now()
            """
        connection.query(sql) { _ in }
    }

    /// Ended jobs past `fleet.retention_seconds`, a thousand at a time.
    private func prune() {
        let sql = """
            DELETE FROM loopd.jobs WHERE id IN (
                SELECT id FROM loopd.jobs WHERE finished_at < now() - make_interval(secs => $1::double precision) LIMIT 1000)
            """
        connection.query(sql, [String(node.config.retentionSeconds)]) { [unowned self] result in
            if case .success(let rows) = result, rows.affected == 1000 { prune() }
        }
    }

    // MARK: Cancels and stopping

    /// Without LISTEN (`fleet.listen = false`), at each heartbeat: the cancels of fleet jobs running here.
    func pollCancels() {
        guard !carriers.isEmpty else { return }
        let sql = """
            SELECT id FROM loopd.jobs
            WHERE claimed_by = $1 AND claimed_incarnation = $2 AND state = 'running' AND cancel_requested_by IS NOT NULL
            """
        connection.query(sql, [node.name, String(node.incarnation)]) { [unowned self] result in
            guard case .success(let rows) = result else { return }
            for row in rows.rows.indices {
                if let id = rows.integer(row, "id") { cancelRequested(id) }
            }
        }
    }

    /// `loopd_cancel`: a cancel of a fleet job running here.
    func cancelRequested(_ jobID: Int64) {
        guard let job = carriers[jobID] else { return }
        _ = scheduler.stop(job, by: job.clientUID)
    }

    /// At a clean stop, after the workers stopped: the fleet jobs that did
    /// not end go back to the queue as if never claimed by this run (their
    /// attempt is not counted), so another node takes them at once.
    func releaseUnfinished(_ done: @escaping () -> Void) {
        let sql = """
            UPDATE loopd.jobs SET state = 'queued', attempt = attempt - 1, lease_until = NULL, claimed_by = NULL,
                claimed_incarnation = NULL
            WHERE claimed_by = $1 AND claimed_incarnation = $2 AND state = 'running'
            """
        connection.query(sql, [node.name, String(node.incarnation)]) { _ in done() }
    }
}

/// Fleet job ids as clients see them: `f-` and the row's id; the local
/// job running an attempt is `f-ID.ATTEMPT`.
enum FleetJobID {
    static func text(_ id: Int64) -> String { "f-\(id)" }

    static func local(_ id: Int64, attempt: Int) -> String { "f-\(id).\(attempt)" }

    /// The row id an id names, with or without its attempt; nil for a local job's id.
    static func parse(_ text: String) -> Int64? {
        guard text.hasPrefix("f-") else { return nil }
        let digits = text.dropFirst(2).prefix { $0 != "." }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let id = Int64(digits), id > 0 else { return nil }
        return id
    }
}

/// PostgreSQL array literals for text parameters (`{"a","b"}`), and back.
enum PostgresArray {
    static func text(_ values: [String?]) -> String {
        "{" + values.map { value in
            guard let value else { return "NULL" }
            var quoted = "\""
            for c in value.unicodeScalars {
                if c == "\"" || c == "\\" { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(c)
            }
            return quoted + "\""
        }.joined(separator: ",") + "}"
    }

    static func text(_ values: [String]) -> String { text(values.map { Optional($0) }) }

    static func bool(_ values: [Bool]) -> String { "{" + values.map { $0 ? "t" : "f" }.joined(separator: ",") + "}" }

    /// A one-dimensional text array as PostgreSQL prints it.
    static func parseText(_ literal: String) -> [String] {
        var out: [String] = []
        var chars = Array(literal.unicodeScalars)
        guard chars.first == "{", chars.last == "}" else { return [] }
        chars = Array(chars.dropFirst().dropLast())
        var i = 0
        while i < chars.count {
            var item = String.UnicodeScalarView()
            if chars[i] == "\"" {
                i += 1
                while i < chars.count, chars[i] != "\"" {
                    if chars[i] == "\\", i + 1 < chars.count { i += 1 }
                    item.append(chars[i])
                    i += 1
                }
                i += 1  // the closing quote
            } else {
                while i < chars.count, chars[i] != "," {
                    item.append(chars[i])
                    i += 1
                }
            }
            out.append(String(item))
            i += 1  // the comma
        }
        return out
    }
}
