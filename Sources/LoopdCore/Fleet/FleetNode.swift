import CPostgres
import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// This daemon as a node of a fleet (`[fleet]`): its connection to the
/// fleet's PostgreSQL database, its row in `loopd.nodes`, its heartbeat,
/// and its share of watching the others (a node silent for `dead_after_ms`
/// is declared dead by whichever live node looks first). Main thread only.
///
/// Time is the database's (`now()`), never the nodes' own clocks, so nodes
/// whose clocks disagree still agree on who is late.
final class FleetNode: @unchecked Sendable {
    /// Where the node stands.
    enum Status: Equatable {
        /// Not yet connected (or reconnecting): why, if an attempt failed.
        case connecting(String?)
        /// Registered, heartbeating.
        case online(schemaVersion: Int)
        /// Connected, but the node may not take part: the schema, or its name held by a live node elsewhere.
        case refused(String)
    }

    let config: DaemonConfig.Fleet
    /// `fleet.node`, or the host's name.
    let name: String
    let host: String
    /// Drawn at each start: tells this run's row from a previous run's (and a previous run's late writes from ours).
    let incarnation: Int64
    private(set) var status = Status.connecting(nil)
    let connection: PostgresConnection
    /// A second connection, for the ends of the jobs run here alone: a
    /// node's ends and its claims then go to the database side by side,
    /// not one after the other (`FleetStore`).
    let endsConnection: PostgresConnection
    /// Claims and runs fleet jobs on the scheduler's lanes (implicitly
    /// unwrapped only because it refers back to this node; set by `init`).
    private(set) var runner: FleetRunner!
    /// Answers the requests about fleet jobs (set by `init`, as `runner`).
    private(set) var jobs: FleetJobs!
    private let scheduler: JobScheduler

    /// The actions this node has, as `loopd.nodes.actions` holds them (`loopd.submit_job` checks them).
    private var actionNames: String {
        JSON.array(scheduler.actions.keys.sorted().map { .string($0) }).serialized()
    }

    /// This node's lanes as `loopd.nodes.lanes` holds them: each worker's name, mode and placement.
    private var laneListing: String {
        JSON.array(scheduler.workers.map { w in
            .object([("name", .string(w.name)), ("mode", .string(w.mode)), ("placement", .string(w.placement.rawValue))])
        }).serialized()
    }

    private let loop: Loop
    private let log: DaemonLogger
    private let metrics: FleetMetrics
    private var heartbeat: LoopTimer?
    /// Whether this run's row was registered at least once (the first is "joined", later ones "reconnected").
    private var joined = false
    /// The last reason logged for being unavailable, so a retry that fails alike is not logged again.
    private var loggedTrouble: String?
    /// When this node last came online (joined, or back after losing the database).
    private var onlineSince = ContinuousClock.now

    /// Loads libpq and checks the connection settings (throws a message for
    /// an operator); fleet jobs will run on `scheduler`'s lanes.
    init(config: DaemonConfig.Fleet, environment: [String: String], scheduler: JobScheduler, loop: Loop,
         log: DaemonLogger, metrics: FleetMetrics) throws(FleetSetupError) {
        self.config = config
        self.scheduler = scheduler
        self.loop = loop
        self.log = log
        self.metrics = metrics
        host = hostName() ?? "localhost"
        name = config.node ?? host
        incarnation = Int64.random(in: 1...Int64.max)
        let parameters = try FleetNode.connectionParameters(config, environment: environment, node: name)
        connection = PostgresConnection(loop: loop, parameters: parameters)
        endsConnection = PostgresConnection(loop: loop, parameters: parameters.map { keyword, value in
            (keyword, keyword == "fallback_application_name" ? value + " ends" : value)
        })
        // Well inside the lease (`dead_after_ms`, at least three heartbeats): a node whose database stopped
        // answering knows it, and refuses fleet requests, before the others rescue its jobs.
        connection.replyTimeout = .milliseconds(max(config.heartbeatIntervalMs * 2, 1_000))
        endsConnection.replyTimeout = connection.replyTimeout
        connection.onConnected = { [unowned self] _ in connected() }
        connection.onLost = { [unowned self] why in lost(why) }
        connection.onRoundTrip = { [unowned self] duration in self.metrics.roundTrip(duration) }
        connection.onNotice = { [unowned self] notice in self.log(.debug, "fleet: the database says: \(notice)") }
        connection.onNotification = { [unowned self] channel, payload in notified(channel, payload) }
        endsConnection.onConnected = { [unowned self] _ in runner.store.flush() }
        endsConnection.onRoundTrip = connection.onRoundTrip
        endsConnection.onNotice = connection.onNotice
        runner = FleetRunner(node: self, scheduler: scheduler, loop: loop, log: log, metrics: metrics)
        jobs = FleetJobs(node: self, scheduler: scheduler, loop: loop, metrics: metrics)
    }

    /// Registered and heartbeating: fleet requests go to the database.
    var isOnline: Bool {
        guard connection.state == .ready else { return false }  // lost, and not told yet
        if case .online = status { return true }
        return false
    }

    /// Whether this node may declare others dead and take their jobs: only
    /// once it has itself been online for a whole `dead_after_ms`. After the
    /// database restarted, or a network between it and every node healed,
    /// the others' heartbeats and leases are stale through no fault of
    /// theirs; the first node back waits as long as they had to come back.
    var mayJudgeOthers: Bool {
        isOnline && ContinuousClock.now - onlineSince >= .milliseconds(config.deadAfterMs)
    }

    /// libpq's keywords for `config`: TCP keepalives and a user timeout so a
    /// silent network breaks the connection within a heartbeat or two
    /// (overridable by the connection string), the string itself, then the
    /// password, which the string may not carry.
    static func connectionParameters(_ config: DaemonConfig.Fleet, environment: [String: String],
                                     node: String) throws(FleetSetupError) -> [(String, String)] {
        if let failure = lpq_load() { throw FleetSetupError(String(cString: failure)) }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = lpq_PQconninfoParse(config.database, &message) else {
            let why = message.map { PostgresError.trimmed(String(cString: $0)) } ?? "not understood"
            if let message { lpq_PQfreemem(message) }
            throw FleetSetupError("fleet.database: \(why)")
        }
        var carriesPassword = false
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val, value.pointee != 0 { carriesPassword = true }
            option += 1
        }
        lpq_PQconninfoFree(options)
        if carriesPassword {
            throw FleetSetupError("fleet.database carries a password, and the configuration is world-readable: "
                                  + "put it in fleet.password_file or the systemd credential fleet-password")
        }
        let timeoutMs = max(config.heartbeatIntervalMs * 2, 1_000)
        var parameters: [(String, String)] = [
            ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("tcp_user_timeout", String(timeoutMs)),
            ("fallback_application_name", "loopd \(node)"),
            ("dbname", config.database),
        ]
        if let password = try password(config, environment: environment) { parameters.append(("password", password)) }
        return parameters
    }

    /// The first line of `password_file`, else of the credential `fleet-password`; nil leaves it to libpq.
    private static func password(_ config: DaemonConfig.Fleet, environment: [String: String]) throws(FleetSetupError) -> String? {
        let path: String
        if let file = config.passwordFile {
            path = file
        } else if let credentials = environment["CREDENTIALS_DIRECTORY"], FileSystem.isReadable("\(credentials)/fleet-password") {
            path = "\(credentials)/fleet-password"
        } else {
            return nil
        }
        switch FileSystem.readFile(path, limit: 4096) {
        case .failure(.errno(let code)): throw FleetSetupError("cannot read the fleet password from \(path): \(errnoText(code))")
        case .failure(.tooLarge): throw FleetSetupError("\(path) is larger than 4096 bytes: not a password file")
        case .success(let bytes):
            let line = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
            guard !line.isEmpty, !line.contains(0) else { throw FleetSetupError("\(path) holds no password on its first line") }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// Connects, and keeps the node's heartbeat going from then on.
    func start() {
        connection.start()
        endsConnection.start()
        let interval = Duration.milliseconds(config.heartbeatIntervalMs)
        let t = LoopTimer(after: interval, interval: interval, tolerance: interval / 10) { [unowned self] _ in beat() }
        heartbeat = t
        loop.add(t, forMode: .common)
    }

    // MARK: Joining

    private func connected() {
        metrics.connected(true)
        setUp()
    }

    /// Checks (or migrates) the schema, then registers.
    private func setUp() {
        FleetMigrator(connection: connection, apply: config.migrate, node: name).run { [unowned self] outcome in
            switch outcome {
            case .failure(.database(.unavailable)):
                return  // `lost` says why
            case .failure(let refusal):
                refuse(refusal.description)
            case .success(let done):
                if case .migrated(let from, let to) = done {
                    log(.notice, "fleet: migrated the database's schema from version \(from) to \(to)")
                }
                register()
            }
        }
    }

    private func register() {
        let sql = """
            INSERT INTO loopd.nodes AS n (name, host, pid, version, incarnation, heartbeat_interval_ms, started_at, heartbeat_at,
                                          lanes, actions)
            VALUES ($1, $2, $3, $4, $5, $6, now(), now(), $7::jsonb, $8::jsonb)
            ON CONFLICT (name) DO UPDATE SET
                host = excluded.host, pid = excluded.pid, version = excluded.version,
                heartbeat_interval_ms = excluded.heartbeat_interval_ms, heartbeat_at = now(), lanes = excluded.lanes,
                actions = excluded.actions,
                started_at = CASE WHEN n.incarnation = excluded.incarnation THEN n.started_at ELSE now() END,
                incarnation = excluded.incarnation, left_at = NULL, dead_at = NULL
            WHERE n.incarnation = excluded.incarnation OR n.host = excluded.host
               OR n.left_at IS NOT NULL OR n.dead_at IS NOT NULL
            RETURNING name
            """
        connection.query(sql, registration) { [unowned self] result in
            switch result {
            case .failure(.unavailable): return
            case .failure(let error): refuse("cannot register: \(error)")
            case .success(let rows) where rows.rows.isEmpty:
                holder { [unowned self] in refuse("the node name \(name) is held by a live node on \($0); give this one another fleet.node") }
            case .success:
                online()
            }
        }
    }

    /// The host of the live node holding this node's name.
    private func holder(_ done: @escaping (String) -> Void) {
        connection.query("SELECT host FROM loopd.nodes WHERE name = $1", [name]) { result in
            done((try? result.get())?.value(0, "host") ?? "another host")
        }
    }

    private func online() {
        status = .online(schemaVersion: FleetSchema.latestVersion)
        onlineSince = .now
        loggedTrouble = nil
        // Listen before anything is read again, so no end falls between the read and the listen.
        if config.listen { connection.script("LISTEN loopd_jobs; LISTEN loopd_job_ended; LISTEN loopd_cancel") { _ in } }
        runner.rescue(previousRunsOf: name)
        jobs.connectedAgain()
        runner.store.flush()
        runner.wantClaim()
        if joined {
            log(.notice, "fleet: node \(name) is back in the fleet", id: .fleetJoined)
        } else {
            joined = true
            log(.notice, "fleet: node \(name) joined the fleet (host \(host), heartbeat every \(config.heartbeatIntervalMs) ms)",
                id: .fleetJoined)
        }
    }

    private func refuse(_ why: String) {
        status = .refused(why)
        if loggedTrouble != why {
            loggedTrouble = why
            log(.error, "fleet: this node takes no part in the fleet: \(why)", id: .fleetUnavailable)
        }
    }

    private func lost(_ why: String) {
        metrics.connected(false)
        let wasOnline = if case .online = status { true } else { false }
        status = .connecting(why)
        if wasOnline || loggedTrouble != why {
            loggedTrouble = why
            log(.warning, "fleet: the database is unreachable (\(why)); local jobs go on, fleet requests are refused "
                + "until it returns", id: .fleetUnavailable)
        }
    }

    // MARK: Heartbeat

    private func beat() {
        switch status {
        case .connecting: return  // the connection retries by itself
        case .refused: setUp()
        case .online: renew()
        }
    }

    /// Says this node is alive (with its lanes), then looks for nodes that are not.
    private func renew() {
        let sql = """
            UPDATE loopd.nodes SET heartbeat_at = now(), lanes = $3::jsonb, actions = $4::jsonb
            WHERE name = $1 AND incarnation = $2 AND dead_at IS NULL AND left_at IS NULL
            """
        connection.query(sql, [name, String(incarnation), laneListing, actionNames]) { [unowned self] result in
            switch result {
            case .failure(.unavailable): return
            case .failure(let error):
                let why = "heartbeat failed: \(error)"
                if loggedTrouble != why {
                    loggedTrouble = why
                    log(.warning, "fleet: \(why)")
                }
            case .success(let rows) where rows.affected == 0:
                // Declared dead while it could not reach the database, or its row taken over.
                log(.warning, "fleet: node \(name) was declared dead or replaced while it could not heartbeat; joining again",
                    id: .fleetUnavailable)
                status = .connecting(nil)
                register()
            case .success:
                if mayJudgeOthers { sweep() }
                runner.beat()
                if !config.listen {
                    // What a notification would have said: ends of waited jobs, cancels of jobs running here.
                    jobs.connectedAgain()
                    runner.store.pollCancels()
                }
            }
        }
    }

    /// A NOTIFY on a channel the connection listens to.
    private func notified(_ channel: String, _ payload: String) {
        switch channel {
        case "loopd_jobs":
            runner.wantClaim()
        case "loopd_job_ended":
            // The ids one statement ended, comma-separated.
            for id in payload.split(separator: ",") { if let id = Int64(id) { jobs.jobEnded(id) } }
        case "loopd_cancel":
            // "NODE ID": a cancel of a job running on NODE.
            let parts = payload.split(separator: " ")
            if parts.count == 2, parts[0] == name, let id = Int64(parts[1]) { runner.store.cancelRequested(id) }
        default:
            return
        }
    }

    /// Declares dead the nodes silent for `dead_after_ms`. Two nodes
    /// sweeping at once declare each one once: the row lock makes the
    /// second re-read `dead_at`.
    private func sweep() {
        let sql = """
            UPDATE loopd.nodes SET dead_at = now()
            WHERE dead_at IS NULL AND left_at IS NULL AND heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
            RETURNING name, host, (extract(epoch FROM now() - heartbeat_at) * 1000)::bigint AS silent_ms
            """
        connection.query(sql, [String(config.deadAfterMs)]) { [unowned self] result in
            guard case .success(let rows) = result else { return }
            for row in rows.rows.indices {
                let node = rows.value(row, "name") ?? "?"
                metrics.declaredDead()
                log(.warning, "fleet: node \(node) (host \(rows.value(row, "host") ?? "?")) declared dead: "
                    + "no heartbeat for \(rows.value(row, "silent_ms") ?? "?") ms", [(.fleetNode, node)], id: .fleetNodeDead)
            }
        }
    }

    /// `register`'s $1 name, $2 host, $3 pid, $4 version, $5 incarnation, $6 heartbeat interval, $7 lanes, $8 actions.
    private var registration: [String?] {
        [name, host, String(processID()), LoopdVersion.current, String(incarnation), String(config.heartbeatIntervalMs),
         laneListing, actionNames]
    }

    // MARK: Leaving

    /// Marks this node as having left (so no one declares it dead) and
    /// closes the connection, running `loop` until done or `limit` passes.
    func leave(within limit: Duration) {
        heartbeat?.invalidate()
        heartbeat = nil
        guard case .online = status else {
            connection.close()
            endsConnection.close()
            return
        }
        var done = false
        let left = { [unowned self] in
            connection.query("UPDATE loopd.nodes SET left_at = now() WHERE name = $1 AND incarnation = $2",
                             [name, String(incarnation)]) { [unowned self] result in
                done = true
                if case .success(let rows) = result, rows.affected == 1 {
                    log(.notice, "fleet: node \(name) left the fleet", id: .fleetLeft)
                }
            }
        }
        // The ends of what ran here first, then what did not end goes back to the queue.
        runner.store.flush { [unowned self] in runner.store.releaseUnfinished(left) }
        let deadline = ContinuousClock.now + limit
        while !done, ContinuousClock.now < deadline {
            _ = loop.run(mode: .default, timeout: deadline - ContinuousClock.now, returnAfterSourceHandled: true)
        }
        connection.close()
        endsConnection.close()
    }

    // MARK: Requests

    /// `fleet`: the nodes, as the database has them.
    func listNodes(_ reply: @escaping (Result<[(String, JSON)], ProtocolError>) -> Void) {
        guard case .online(let version) = status else { return reply(.failure(unavailableError)) }
        let sql = """
            SELECT name, host, pid, version, heartbeat_interval_ms, lanes::text AS lanes,
                   (extract(epoch FROM started_at) * 1000)::bigint AS started_ms,
                   (extract(epoch FROM heartbeat_at) * 1000)::bigint AS heartbeat_ms,
                   (extract(epoch FROM now() - heartbeat_at) * 1000)::bigint AS silent_ms,
                   (extract(epoch FROM left_at) * 1000)::bigint AS left_ms,
                   (extract(epoch FROM dead_at) * 1000)::bigint AS dead_ms,
                   (SELECT count(*) FROM loopd.jobs j WHERE j.state = 'running' AND j.claimed_by = n.name) AS running,
                   (SELECT count(*) FROM loopd.jobs WHERE state = 'queued') AS queued,
                   (SELECT (extract(epoch FROM now() - min(run_at)) * 1000)::bigint FROM loopd.jobs
                    WHERE state = 'queued' AND run_at <= now()) AS lag_ms
            FROM loopd.nodes n ORDER BY name
            """
        connection.query(sql) { [unowned self] result in
            switch result {
            case .failure(let error):
                reply(.failure(ProtocolError(.fleetUnavailable, "\(error)")))
            case .success(let rows):
                let nodes = rows.rows.indices.map { FleetNode.nodeJSON(rows, $0) }
                let queued = rows.integer(0, "queued") ?? 0
                let lag = rows.integer(0, "lag_ms") ?? 0
                reply(.success([("node", .string(name)), ("schema_version", .integer(Int64(version))),
                                ("queued", .integer(queued)), ("lag_ms", .integer(max(lag, 0))), ("nodes", .array(nodes))]))
            }
        }
    }

    /// The `fleet_unavailable` refusal for the node's status now.
    var unavailableError: ProtocolError {
        switch status {
        case .connecting(let why):
            ProtocolError(.fleetUnavailable, "the fleet's database is unreachable from this node" + (why.map { ": \($0)" } ?? ""))
        case .refused(let why):
            ProtocolError(.fleetUnavailable, why)
        case .online:
            ProtocolError(.fleetUnavailable, "the fleet's database is reachable")
        }
    }

    /// One node of `fleet`'s reply. `state`: `left` (stopped cleanly),
    /// `dead` (declared), `late` (silent past two of its heartbeats, not
    /// yet declared), else `alive`.
    static func nodeJSON(_ rows: PostgresRows, _ row: Int) -> JSON {
        func integer(_ column: String) -> Int64? { rows.integer(row, column) }
        let silent = integer("silent_ms") ?? 0
        let interval = integer("heartbeat_interval_ms") ?? 0
        let state = if integer("left_ms") != nil { "left" } else if integer("dead_ms") != nil { "dead" }
                    else if silent > 2 * interval { "late" } else { "alive" }
        var fields: [(String, JSON)] = [
            ("name", .string(rows.value(row, "name") ?? "")), ("host", .string(rows.value(row, "host") ?? "")),
            ("state", .string(state)), ("pid", .integer(integer("pid") ?? 0)), ("version", .string(rows.value(row, "version") ?? "")),
            ("heartbeat_interval_ms", .integer(interval)), ("heartbeat_age_ms", .integer(max(silent, 0))),
            ("running", .integer(integer("running") ?? 0)),
        ]
        for (column, key) in [("started_ms", "started_at"), ("heartbeat_ms", "heartbeat_at"), ("left_ms", "left_at"), ("dead_ms", "dead_at")] {
            if let ms = integer(column) { fields.append((key, .string(Timestamp.format(unixMilliseconds: ms)))) }
        }
        let lanes = rows.value(row, "lanes").flatMap { try? JSONParser.parse(Array($0.utf8)) } ?? .array([])
        fields.append(("lanes", lanes))
        return .object(fields)
    }
}

/// A `[fleet]` table loopd cannot act on: libpq missing, or the connection settings.
struct FleetSetupError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
