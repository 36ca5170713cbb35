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
        connection.query("SELECT pg_advisory_lock($1)", [key]) { locked in
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
