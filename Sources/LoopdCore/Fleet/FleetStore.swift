import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// The fleet's store of jobs, as one node sees it: the attempts this node
/// claimed (`JobStore`). Each runs as a local job, its carrier; the store
/// writes their ends back in one statement per pass (the fleet's group
/// commit) on a connection of their own, beside the node's claims; it
/// renews their leases at each heartbeat, and stops one when another node
/// cancels it.
///
/// Fencing: an end is written only where the row still names this node,
/// this run of it and this attempt; a node cut off past its lease finds its
/// late ends refused, and logs them. Main thread only.
final class FleetStore: JobStore, @unchecked Sendable {
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
    }

    private var connection: PostgresConnection { node.connection }

    // MARK: JobStore

    /// A claimed attempt is running here as `job`: its lease is renewed at
    /// each heartbeat, and a cancel from another node stops it.
    func keep(_ job: Job) {
        guard let run = job.origin.submitter.fleetRun else { return }
        carriers[run.jobID] = job
    }

    /// The attempt `job` ran ended: its end joins this pass's statement.
    func keepEnd(of job: Job, _ end: Job.End) {
        guard let run = job.origin.submitter.fleetRun else { return }
        if carriers[run.jobID] === job { carriers[run.jobID] = nil }
        finish(run, state: end.protocolState.rawValue, result: (job.result ?? .object([])).serialized(), error: job.error,
               startedMs: job.startedAtUnixMs == 0 ? nil : job.startedAtUnixMs, endedMs: job.endedAtUnixMs,
               lane: job.worker.name)
    }

    /// None: this store keeps no ends in memory. A fleet job's end is read
    /// from the database by its fleet id (`FleetJobs`).
    func finished(id: String) -> FinishedJob? { nil }

    // MARK: Ends

    /// Ends a claimed attempt that could not start here (no local user of
    /// the owner's name, or a request this node refuses).
    func fail(_ run: FleetRun, _ error: ProtocolError) {
        finish(run, state: JobState.failed.rawValue, result: "{}", error: error, startedMs: nil)
    }

    private func finish(_ run: FleetRun, state: String, result: String, error: ProtocolError?, startedMs: Int64?,
                        endedMs: Int64 = unixMilliseconds(), lane: String? = nil) {
        let backoff = scheduler.timing.backoff(afterAttempt: run.attempt, baseMs: run.retryBackoffMs)
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
        // Written once both are back: the node in the fleet, and the connection its ends go by.
        guard !finishes.isEmpty, node.isOnline, node.endsConnection.state == .ready else {
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
        node.endsConnection.query(sql, parameters) { [unowned self] result in
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

    /// At each heartbeat: the leases of the attempts running here, in one statement.
    func renewLeases() {
        guard !carriers.isEmpty else { return }
        let sql = """
            UPDATE loopd.jobs SET lease_until = now() + make_interval(secs => $3::double precision / 1000)
            WHERE claimed_by = $1 AND claimed_incarnation = $2 AND state = 'running'
            """
        connection.query(sql, [node.name, String(node.incarnation), String(node.config.deadAfterMs)]) { _ in }
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
