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

/// What runs fleet jobs on this node: claims queued jobs for its lanes with
/// room (`FOR UPDATE SKIP LOCKED`, as many as they have room for) and runs
/// each as a local job on its lane, whose store (`FleetStore`) writes its
/// end back; at each heartbeat renews the leases of what runs here, and
/// rescues the jobs of nodes whose leases ran out.
///
/// It learns of new work by LISTEN (`loopd_jobs`, folded into one claim per
/// pass), when a job's end frees a place on a lane, at the next due delayed
/// job, and by a poll
/// every heartbeat interval in case a notification was lost with a
/// connection. Main thread only.
final class FleetRunner: @unchecked Sendable {
    private unowned let node: FleetNode
    private let scheduler: JobScheduler
    private let loop: Loop
    private let log: DaemonLogger
    private let metrics: FleetMetrics
    /// Where the attempts claimed here are kept, and their ends written.
    let store: FleetStore
    private var claiming = false
    private var claimWanted = false
    /// How many claimed jobs each lane may hold: 1 while claims come back
    /// short; doubled after each claim that got all it asked for (a
    /// backlog), up to `maxJobsPerLane`, so a backlog drains in fewer and
    /// larger statements; 1 again once a claim comes back short. The jobs
    /// queue on the node's lanes under its leases.
    private var jobsPerLane = 1
    static let maxJobsPerLane = 16
    private var claimScheduled = false
    /// Wakes the node when the earliest delayed job falls due.
    private var dueTimer: LoopTimer?
    private var lastPrune = ContinuousClock.now - .seconds(3600)
    private var lastAnalyze = ContinuousClock.now - .seconds(3600)

    init(node: FleetNode, scheduler: JobScheduler, loop: Loop, log: DaemonLogger, metrics: FleetMetrics) {
        self.node = node
        self.scheduler = scheduler
        self.loop = loop
        self.log = log
        self.metrics = metrics
        store = FleetStore(node: node, scheduler: scheduler, loop: loop, log: log, metrics: metrics)
        scheduler.join(fleet: store) { [unowned self] _ in wantClaim() }
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

    /// A lane as a claim sees it: what it fits, and how many more jobs it may take.
    private struct Lane {
        let name: String
        let mode: String
        let automatic: Bool
        var room: Int

        init(_ queue: WorkerQueue, room: Int) {
            name = queue.worker.name
            mode = queue.worker.mode
            automatic = queue.worker.placement == .auto
            self.room = room
        }

        func fits(worker: String?, mode jobMode: String?) -> Bool {
            (worker == name || (worker == nil && automatic)) && ((jobMode ?? "default") == mode || jobMode == "common")
        }
    }

    /// The lanes that may take claimed jobs: those down to half of
    /// `jobsPerLane` or less (an idle one, while it is 1), so a lane is
    /// topped up before it runs dry.
    private func lanesWithRoom() -> [Lane] {
        guard scheduler.isAccepting else { return [] }
        return scheduler.queues.compactMap { q in
            guard q.outstanding <= jobsPerLane / 2, q.outstanding < jobsPerLane else { return nil }
            return Lane(q, room: jobsPerLane - q.outstanding)
        }
    }

    private func claim() {
        guard claimWanted, !claiming, node.isOnline else { return }
        let lanes = lanesWithRoom()
        guard !lanes.isEmpty else { return }
        claimWanted = false
        claiming = true
        let asked = lanes.reduce(0) { $0 + $1.room }
        let sql = """
            SELECT id, action, args, owner_name, worker, mode, priority, timeout_ms, attempt, retry_backoff_ms,
                   (extract(epoch FROM submitted_at) * 1000)::bigint AS submitted_ms
            FROM loopd.claim($1, $2, $3::text[], $4::text[], $5::boolean[], $6::text[], $7, $8)
            """
        let actions = scheduler.actions.keys.sorted()
        connection.query(sql, [node.name, String(node.incarnation), PostgresArray.text(lanes.map(\.name)),
                               PostgresArray.text(lanes.map(\.mode)), PostgresArray.bool(lanes.map(\.automatic)),
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
                if rows.rows.count == asked {
                    if jobsPerLane == 1 { analyzeBacklog() }
                    jobsPerLane = min(jobsPerLane * 2, FleetRunner.maxJobsPerLane)
                    wantClaim()  // every place was filled: more may wait
                } else {
                    jobsPerLane = 1
                    // Nothing more is due now: wake for the next delayed job. (A claim that got some is followed
                    // by another as they end, so the question waits for one that gets none.)
                    if rows.rows.isEmpty { armDue() }
                }
            }
            if claimWanted { claim() }
        }
    }

    /// Runs a claimed row as a local job on a lane that fits it, the one of `lanes` with the most room.
    private func start(_ rows: PostgresRows, _ row: Int, lanes: inout [Lane]) {
        func text(_ column: String) -> String? { rows.value(row, column) }
        func integer(_ column: String) -> Int64? { rows.integer(row, column) }
        guard let jobID = integer("id"), let attempt = integer("attempt") else { return }
        let run = FleetRun(jobID: jobID, attempt: Int(attempt), retryBackoffMs: integer("retry_backoff_ms") ?? 0)
        let worker = text("worker")
        let mode = text("mode")
        // The lane with room that fits it and has the most; else (earlier rows of the batch filled them: the
        // claim checks each job against the lanes, not against their room) the least loaded lane that fits,
        // where it queues; else (modes switched meanwhile) the lane it names or the first automatic one, where
        // it is held.
        let lane: String
        if let i = lanes.indices.filter({ lanes[$0].room > 0 && lanes[$0].fits(worker: worker, mode: mode) })
            .max(by: { lanes[$0].room < lanes[$1].room }) {
            lanes[i].room -= 1
            lane = lanes[i].name
        } else if let q = scheduler.queues.filter({ Lane($0, room: 0).fits(worker: worker, mode: mode) })
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
            return store.fail(run, ProtocolError(
                .jobFailed, "node \(node.name) has no user named \"\(ownerName)\" to run the job as its owner"))
        }
        var s = SubmitRequest(action: text("action") ?? "", args: PostgresArray.parseText(text("args") ?? "{}"),
                              placement: .worker(lane), wait: false, timeoutMs: integer("timeout_ms"), mode: mode,
                              priority: UInt32(clamping: integer("priority") ?? Int64(SubmitRequest.defaultPriority)))
        s.fleet = true
        do {
            let job = try scheduler.accept(s, submitter: JobSubmitter(owner, fleetRun: run),
                                           jobID: FleetJobID.local(jobID, attempt: run.attempt),
                                           submittedAt: integer("submitted_ms") ?? unixMilliseconds())
            scheduler.dispatch(job, ack: nil)
        } catch {
            store.fail(run, error)
        }
    }

    /// A backlog has just appeared: the planner learns of it now, not at
    /// autovacuum's next round (up to a minute away). Until then it takes a
    /// table that has just filled for nearly empty, and its plans walk every
    /// job: the ends of one pass took seconds in 20,000 queued jobs. At most
    /// once a minute, and never waiting for a lock (autovacuum's own ANALYZE
    /// holds it); a role that does not own the table is refused, quietly.
    private func analyzeBacklog() {
        guard ContinuousClock.now - lastAnalyze > .seconds(60) else { return }
        lastAnalyze = .now
        connection.script("SET lock_timeout = 50; ANALYZE loopd.jobs; RESET lock_timeout") { _ in }
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

    // MARK: Leases, rescues, expiry, retention

    /// At each heartbeat, once the node's own row is renewed.
    func beat() {
        store.renewLeases()
        if node.mayJudgeOthers { rescue() }
        expire()
        if ContinuousClock.now - lastPrune > .seconds(60) {
            lastPrune = .now
            prune()
        }
        wantClaim()  // the poll, in case a notification was lost
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
