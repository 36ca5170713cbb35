import LoopPlatform
import LoopRuntime

/// The fleet's tables in PostgreSQL, as numbered migrations in the schema
/// `loopd`. `loopd.schema_migrations` records which were applied; a node
/// applies the missing ones under an advisory lock (or leaves them to
/// `loopd --fleet-migrate`), and refuses a database whose schema is newer
/// than the migrations it knows. A released migration never changes: a
/// change is a new one.
enum FleetSchema {
    /// One step: its number (from 1, without gaps) and the statements it runs.
    struct Migration: Sendable {
        let version: Int
        let sql: String
    }

    /// Taken (`pg_advisory_lock`) while the schema is checked or migrated,
    /// so nodes starting together migrate once. The bytes of "loopdSch".
    static let advisoryLockKey: Int64 = 0x6c6f_6f70_6453_6368

    static let migrations: [Migration] = [
        Migration(version: 1, sql: """
            CREATE SCHEMA IF NOT EXISTS loopd;
            CREATE TABLE loopd.schema_migrations (
                version integer PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now(),
                applied_by text NOT NULL
            );
            CREATE TABLE loopd.nodes (
                name text PRIMARY KEY,
                host text NOT NULL,
                pid integer NOT NULL,
                version text NOT NULL,
                incarnation bigint NOT NULL,
                heartbeat_interval_ms integer NOT NULL,
                started_at timestamptz NOT NULL,
                heartbeat_at timestamptz NOT NULL,
                left_at timestamptz,
                dead_at timestamptz,
                lanes jsonb NOT NULL DEFAULT '[]'
            );
            """),
        // Fleet jobs. `attempt` counts the attempts started; a finish counts
        // only when its attempt and claimer still match (`FleetRunner`).
        Migration(version: 2, sql: """
            CREATE TABLE loopd.jobs (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                state text NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled', 'expired')),
                action text NOT NULL,
                args text[] NOT NULL DEFAULT '{}',
                owner_name text NOT NULL,
                owner_uid bigint,
                submitted_node text NOT NULL,
                worker text,
                node text,
                mode text,
                key text,
                unique_key text,
                priority bigint NOT NULL,
                timeout_ms bigint,
                retries integer NOT NULL DEFAULT 0,
                retry_backoff_ms bigint NOT NULL,
                attempt integer NOT NULL DEFAULT 0,
                submitted_at timestamptz NOT NULL DEFAULT now(),
                run_at timestamptz NOT NULL DEFAULT now(),
                expires_at timestamptz,
                claimed_by text,
                claimed_incarnation bigint,
                lane text,
                lease_until timestamptz,
                started_at timestamptz,
                finished_at timestamptz,
                cancel_requested_by text,
                result jsonb,
                error_code text,
                error_message text,
                attempts jsonb NOT NULL DEFAULT '[]'
            );
            -- The claim: queued jobs in the order they run.
            CREATE INDEX jobs_ready ON loopd.jobs (priority, run_at, id) WHERE state = 'queued';
            -- The next delayed job to wake for.
            CREATE INDEX jobs_due ON loopd.jobs (run_at) WHERE state = 'queued';
            -- Queued jobs that may expire, for the sweep at each heartbeat.
            CREATE INDEX jobs_expiry ON loopd.jobs (expires_at) WHERE state = 'queued' AND expires_at IS NOT NULL;
            -- Leases to renew and to rescue.
            CREATE INDEX jobs_running ON loopd.jobs (claimed_by, lease_until) WHERE state = 'running';
            -- Retention: ended jobs by age.
            CREATE INDEX jobs_finished ON loopd.jobs (finished_at) WHERE finished_at IS NOT NULL;
            -- Listings by owner.
            CREATE INDEX jobs_owner ON loopd.jobs (owner_name, id);
            -- Per-key order: the first job of a key not yet ended.
            CREATE INDEX jobs_key ON loopd.jobs (key, id) WHERE key IS NOT NULL AND state IN ('queued', 'running');
            -- One job per owner and unique key, however many nodes submit it at once.
            CREATE UNIQUE INDEX jobs_unique ON loopd.jobs (owner_name, unique_key) WHERE unique_key IS NOT NULL;
            -- A table of short-lived rows updated a few times each: vacuum it
            -- by change, not by the default fifth of a large table.
            ALTER TABLE loopd.jobs SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000,
                                        autovacuum_analyze_scale_factor = 0.02, fillfactor = 80);

            -- The nodes' wake-ups, one statement's worth at a time: new or
            -- requeued work (one notification, which PostgreSQL folds per
            -- transaction), the ids of the jobs that ended (in chunks that fit
            -- a payload), and cancels of running jobs ("NODE ID").
            CREATE FUNCTION loopd.jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF EXISTS (SELECT 1 FROM inserted WHERE state = 'queued') THEN
                    PERFORM pg_notify('loopd_jobs', '');
                END IF;
                RETURN NULL;
            END $$;
            CREATE TRIGGER jobs_notify_insert AFTER INSERT ON loopd.jobs REFERENCING NEW TABLE AS inserted
                FOR EACH STATEMENT EXECUTE FUNCTION loopd.jobs_inserted();
            CREATE FUNCTION loopd.jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                payload text;
            BEGIN
                IF EXISTS (SELECT 1 FROM after_rows a JOIN before_rows b USING (id)
                           WHERE a.state = 'queued' AND b.state <> 'queued') THEN
                    PERFORM pg_notify('loopd_jobs', '');
                END IF;
                FOR payload IN
                    SELECT string_agg(a.id::text, ',') FROM after_rows a JOIN before_rows b USING (id)
                    WHERE a.state NOT IN ('queued', 'running') AND b.state IN ('queued', 'running')
                    GROUP BY a.id / 300
                LOOP
                    PERFORM pg_notify('loopd_job_ended', payload);
                END LOOP;
                FOR payload IN
                    SELECT a.claimed_by || ' ' || a.id FROM after_rows a JOIN before_rows b USING (id)
                    WHERE a.state = 'running' AND a.cancel_requested_by IS NOT NULL AND b.cancel_requested_by IS NULL
                LOOP
                    PERFORM pg_notify('loopd_cancel', payload);
                END LOOP;
                RETURN NULL;
            END $$;
            CREATE TRIGGER jobs_notify_update AFTER UPDATE ON loopd.jobs
                REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
                FOR EACH STATEMENT EXECUTE FUNCTION loopd.jobs_updated();

            -- A node's claim: up to `wanted` due jobs its idle lanes fit, in
            -- the order they run, skipping rows another node is claiming. A
            -- function so that its plan walks jobs_ready in order and stops at
            -- the limit whatever the statistics say: without them (a busy,
            -- fresh table) the planner would sort every queued job for each
            -- claim through a bitmap scan.
            CREATE FUNCTION loopd.claim(node text, incarnation bigint, lane_names text[], lane_modes text[],
                                        lane_automatic boolean[], actions text[], wanted integer, lease_ms bigint)
            RETURNS SETOF loopd.jobs LANGUAGE plpgsql SET enable_bitmapscan = off AS $$
            BEGIN
                RETURN QUERY
                WITH lanes AS (SELECT * FROM unnest(lane_names, lane_modes, lane_automatic) AS l(name, mode, automatic)),
                picked AS (
                    SELECT j.id FROM loopd.jobs j
                    WHERE j.state = 'queued' AND j.run_at <= now() AND (j.expires_at IS NULL OR j.expires_at > now())
                      AND (j.node IS NULL OR j.node = claim.node) AND j.action = ANY(claim.actions)
                      -- A keyed job runs once every job of its key submitted before it has ended.
                      AND (j.key IS NULL OR j.id = (SELECT min(k.id) FROM loopd.jobs k
                                                    WHERE k.key = j.key AND k.state IN ('queued', 'running')))
                      AND EXISTS (SELECT 1 FROM lanes l
                                  WHERE (j.worker = l.name OR (j.worker IS NULL AND l.automatic))
                                    AND (coalesce(j.mode, 'default') = l.mode OR j.mode = 'common'))
                    ORDER BY j.priority, j.run_at, j.id
                    LIMIT wanted
                    FOR UPDATE SKIP LOCKED),
                claimed AS (
                    UPDATE loopd.jobs j
                    SET state = 'running', attempt = j.attempt + 1, claimed_by = claim.node,
                        claimed_incarnation = claim.incarnation, cancel_requested_by = NULL,
                        lease_until = now() + make_interval(secs => lease_ms::double precision / 1000)
                    FROM picked WHERE j.id = picked.id
                    RETURNING j.*)
                SELECT * FROM claimed;
            END $$;

            -- The actions each node has, for submit_job to check.
            ALTER TABLE loopd.nodes ADD COLUMN actions jsonb NOT NULL DEFAULT '[]';

            -- A fleet job inserted by an application in its own transaction:
            -- rolled back, it never existed; committed, it runs. The checks
            -- of a submit that SQL can make: the protocol's bounds, and an
            -- action some live node has. Who may call it may submit as any
            -- owner: grant EXECUTE only to roles trusted with that.
            CREATE FUNCTION loopd.submit_job(
                action text, args text[] DEFAULT '{}', owner_name text DEFAULT NULL, worker text DEFAULT NULL,
                node text DEFAULT NULL, mode text DEFAULT NULL, priority bigint DEFAULT 2147483648,
                delay_ms bigint DEFAULT 0, timeout_ms bigint DEFAULT NULL, retries integer DEFAULT 0,
                retry_backoff_ms bigint DEFAULT 1000, expires_in_ms bigint DEFAULT NULL, key text DEFAULT NULL,
                unique_key text DEFAULT NULL)
            RETURNS text LANGUAGE plpgsql AS $$
            #variable_conflict use_column
            DECLARE
                made bigint;
            BEGIN
                IF action IS NULL OR octet_length(action) NOT BETWEEN 1 AND 256 THEN
                    RAISE EXCEPTION 'loopd.submit_job: action must be 1 to 256 bytes' USING ERRCODE = '22023';
                END IF;
                IF owner_name IS NULL OR octet_length(owner_name) NOT BETWEEN 1 AND 256 THEN
                    RAISE EXCEPTION 'loopd.submit_job: owner_name is required: the user name the job runs as on every node'
                        USING ERRCODE = '22023';
                END IF;
                IF args IS NULL OR cardinality(args) > 256 OR array_position(args, NULL) IS NOT NULL THEN
                    RAISE EXCEPTION 'loopd.submit_job: args must be at most 256 strings, none of them NULL' USING ERRCODE = '22023';
                END IF;
                IF octet_length(worker) NOT BETWEEN 1 AND 256 OR octet_length(node) NOT BETWEEN 1 AND 256
                   OR octet_length(mode) NOT BETWEEN 1 AND 256 OR octet_length(key) NOT BETWEEN 1 AND 256
                   OR octet_length(unique_key) NOT BETWEEN 1 AND 4096 THEN
                    RAISE EXCEPTION 'loopd.submit_job: worker, node, mode and key must be 1 to 256 bytes, unique_key 1 to 4096'
                        USING ERRCODE = '22023';
                END IF;
                IF priority IS NULL OR priority NOT BETWEEN 0 AND 4294967295 THEN
                    RAISE EXCEPTION 'loopd.submit_job: priority must be between 0 and 4294967295' USING ERRCODE = '22023';
                END IF;
                IF delay_ms IS NULL OR delay_ms NOT BETWEEN 0 AND 86400000 OR timeout_ms NOT BETWEEN 1 AND 86400000
                   OR retry_backoff_ms IS NULL OR retry_backoff_ms NOT BETWEEN 0 AND 86400000
                   OR expires_in_ms NOT BETWEEN 1 AND 604800000 THEN
                    RAISE EXCEPTION 'loopd.submit_job: delay_ms and retry_backoff_ms must be 0 to 86400000, timeout_ms 1 to 86400000, expires_in_ms 1 to 604800000'
                        USING ERRCODE = '22023';
                END IF;
                IF retries IS NULL OR retries NOT BETWEEN 0 AND 1000 THEN
                    RAISE EXCEPTION 'loopd.submit_job: retries must be between 0 and 1000' USING ERRCODE = '22023';
                END IF;
                IF NOT EXISTS (SELECT 1 FROM loopd.nodes n WHERE n.left_at IS NULL AND n.dead_at IS NULL
                               AND n.actions ? submit_job.action) THEN
                    RAISE EXCEPTION 'loopd.submit_job: no live node of the fleet has an action named "%"', action
                        USING ERRCODE = '22023';
                END IF;
                INSERT INTO loopd.jobs AS j (action, args, owner_name, submitted_node, worker, node, mode, priority,
                                             timeout_ms, retries, retry_backoff_ms, run_at, expires_at, key, unique_key)
                VALUES (submit_job.action, submit_job.args, submit_job.owner_name, 'sql:' || session_user,
                        submit_job.worker, submit_job.node, submit_job.mode, submit_job.priority, submit_job.timeout_ms,
                        submit_job.retries, submit_job.retry_backoff_ms,
                        now() + make_interval(secs => submit_job.delay_ms::double precision / 1000),
                        now() + make_interval(secs => submit_job.expires_in_ms::double precision / 1000),
                        submit_job.key, submit_job.unique_key)
                ON CONFLICT (owner_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
                RETURNING j.id INTO made;
                IF made IS NULL THEN
                    -- The owner's job with this unique key: the one this submit names.
                    SELECT j.id INTO made FROM loopd.jobs j
                    WHERE j.owner_name = submit_job.owner_name AND j.unique_key = submit_job.unique_key;
                END IF;
                RETURN 'f-' || made;
            END $$;
            """),
        Migration(version: 3, sql: """
            -- The claim's plan, whatever the statistics: until the next
            -- ANALYZE of a table that has just filled, the planner took the
            -- queued jobs from jobs_due and sorted them all for each claim
            -- (40 ms with 40,000 queued, against 0.1 ms in running order),
            -- and found the claimed rows by scanning the table (9 ms a claim
            -- while 50 producers streamed). No sort: the only ordered path
            -- is jobs_ready; no sequential scan: claimed rows are found by id.
            ALTER FUNCTION loopd.claim(text, bigint, text[], text[], boolean[], text[], integer, bigint)
                SET enable_sort = off;
            ALTER FUNCTION loopd.claim(text, bigint, text[], text[], boolean[], text[], integer, bigint)
                SET enable_seqscan = off;
            -- The notifications of an update join its rows before and after
            -- by id. The planner takes a transition table for one row, and
            -- joined them in a nested loop: 7.6 s for a statement that ended
            -- 6,000 jobs. A hash join is linear.
            ALTER FUNCTION loopd.jobs_updated() SET enable_nestloop = off;
            """),
    ]

    /// The newest schema this loopd knows.
    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The script that applies `migration` and records it, as one
    /// transaction (a multi-statement simple query without BEGIN is one).
    static func script(_ migration: Migration, appliedBy node: String) -> String {
        migration.sql + "\nINSERT INTO loopd.schema_migrations (version, applied_by) VALUES ("
            + "\(migration.version), \(literal(node)));"
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
    }
}

/// Brings a database's fleet schema to `FleetSchema.latestVersion`, or
/// checks that it is there. One run per connection: lock, read the version,
/// apply what is missing (if allowed), unlock.
struct FleetMigrator {
    /// What a run found or did.
    enum Outcome: Equatable, Sendable {
        /// The schema was current already.
        case current(version: Int)
        /// Migrations from `from` + 1 to `to` were applied.
        case migrated(from: Int, to: Int)
    }

    /// Why the schema cannot be used.
    enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The database has migrations this loopd does not know: a newer loopd migrated it.
        case newer(found: Int, known: Int)
        /// Migrations are missing and this node may not apply them.
        case older(found: Int, known: Int)
        case database(PostgresError)

        var description: String {
            switch self {
            case .newer(let found, let known):
                "the database's fleet schema is version \(found), newer than this loopd knows (\(known)): "
                    + "upgrade loopd on this node"
            case .older(let found, let known):
                "the database's fleet schema is version \(found) and this loopd needs \(known); "
                    + "run loopd --fleet-migrate (or set fleet.migrate = true)"
            case .database(let error): "\(error)"
            }
        }
    }

    let connection: PostgresConnection
    /// Whether to apply missing migrations (else only check).
    let apply: Bool
    /// Recorded as `applied_by`.
    let node: String

    func run(_ done: @escaping (Result<Outcome, Refusal>) -> Void) {
        let key = String(FleetSchema.advisoryLockKey)
        // Another node may hold the lock while it migrates: not a silent server.
        connection.query("SELECT pg_advisory_lock($1)", [key], bounded: false) { locked in
            if case .failure(let error) = locked { return done(.failure(.database(error))) }
            currentVersion { found in
                let finish: (Result<Outcome, Refusal>) -> Void = { outcome in
                    // An unlock that fails went with its connection, and the lock with it.
                    connection.query("SELECT pg_advisory_unlock($1)", [key]) { _ in done(outcome) }
                }
                switch found {
                case .failure(let error): finish(.failure(.database(error)))
                case .success(let version) where version > FleetSchema.latestVersion:
                    finish(.failure(.newer(found: version, known: FleetSchema.latestVersion)))
                case .success(let version) where version == FleetSchema.latestVersion:
                    finish(.success(.current(version: version)))
                case .success(let version) where !apply:
                    finish(.failure(.older(found: version, known: FleetSchema.latestVersion)))
                case .success(let version):
                    applyMigrations(after: version) { finish($0.map { .migrated(from: version, to: FleetSchema.latestVersion) }) }
                }
            }
        }
    }

    /// The newest applied migration; 0 for a database without the schema.
    private func currentVersion(_ done: @escaping (Result<Int, PostgresError>) -> Void) {
        connection.query("SELECT to_regclass('loopd.schema_migrations') IS NOT NULL AS present") { result in
            switch result {
            case .failure(let error): done(.failure(error))
            case .success(let rows) where rows.value(0, "present") != "t": done(.success(0))
            case .success:
                connection.query("SELECT coalesce(max(version), 0) AS version FROM loopd.schema_migrations") { result in
                    done(result.map { Int($0.value(0, "version") ?? "") ?? 0 })
                }
            }
        }
    }

    private func applyMigrations(after version: Int, _ done: @escaping (Result<Void, Refusal>) -> Void) {
        guard let next = FleetSchema.migrations.first(where: { $0.version > version }) else { return done(.success(())) }
        connection.script(FleetSchema.script(next, appliedBy: node)) { result in
            switch result {
            case .failure(let error): done(.failure(.database(error)))
            case .success: applyMigrations(after: next.version, done)
            }
        }
    }
}

extension FleetMigrator {
    /// `loopd --fleet-migrate`: connects once on the calling thread's loop,
    /// brings the schema up to date, and reports; a failed connection is
    /// not retried.
    static func migrateOnce(_ config: DaemonConfig.Fleet, environment: [String: String]) -> Result<Outcome, FleetSetupError> {
        let node = config.node ?? hostName() ?? "localhost"
        let parameters: [(String, String)]
        do {
            parameters = try FleetNode.connectionParameters(config, environment: environment, node: node)
        } catch {
            return .failure(error)
        }
        let loop = Loop.current
        let connection = PostgresConnection(loop: loop, parameters: parameters)
        var outcome: Result<Outcome, FleetSetupError>?
        connection.onLost = { why in
            if outcome == nil { outcome = .failure(FleetSetupError("cannot reach the fleet's database: \(why)")) }
        }
        connection.onConnected = { connection in
            FleetMigrator(connection: connection, apply: true, node: node).run { result in
                outcome = result.mapError { FleetSetupError("\($0)") }
            }
        }
        connection.start()
        while outcome == nil {
            loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
        }
        connection.close()
        return outcome!
    }
}
