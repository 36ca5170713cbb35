import Foundation
import Testing
@testable import LoopdCore

/// `[fleet]` (docs/FLEET.md): read, validated, and turned into libpq's
/// connection keywords without ever taking a password from the file.
@Suite("Fleet configuration")
struct FleetConfigTests {
    private let workers = "[[workers]]\nname = \"w1\"\n"

    private func parse(_ fleet: String) throws(ConfigError) -> DaemonConfig {
        try ConfigLoader.parse(workers + "[fleet]\n" + fleet + "\n", origin: "<test>")
    }

    @Test("no [fleet] table: no fleet; the table's defaults as documented")
    func defaults() throws {
        #expect(try ConfigLoader.parse(workers, origin: "<test>").fleet == nil)
        let fleet = try #require(try parse("database = \"dbname=loopd\"").fleet)
        #expect(fleet == DaemonConfig.Fleet(database: "dbname=loopd"))
        #expect(fleet.node == nil)
        #expect(fleet.passwordFile == nil)
        #expect(fleet.heartbeatIntervalMs == 2_000)
        #expect(fleet.deadAfterMs == 15_000)
        #expect(fleet.migrate)
        #expect(fleet.jobs == .local)
        #expect(fleet.retentionSeconds == 86_400)
        #expect(fleet.listen)
    }

    @Test("every key is read")
    func everyKey() throws {
        let fleet = try #require(try parse("""
            database = "postgresql://loopd@db.example/loopd?sslmode=verify-full"
            password_file = "/etc/loopd/fleet-password"
            node = "web-1"
            heartbeat_interval_ms = 1000
            dead_after_ms = 5000
            migrate = false
            jobs = "fleet"
            retention_seconds = 3600
            listen = false
            """).fleet)
        #expect(fleet.database == "postgresql://loopd@db.example/loopd?sslmode=verify-full")
        #expect(fleet.passwordFile == "/etc/loopd/fleet-password")
        #expect(fleet.node == "web-1")
        #expect(fleet.heartbeatIntervalMs == 1_000)
        #expect(fleet.deadAfterMs == 5_000)
        #expect(!fleet.migrate)
        #expect(fleet.jobs == .fleet)
        #expect(fleet.retentionSeconds == 3_600)
        #expect(!fleet.listen)
    }

    @Test("bad settings are errors naming the key")
    func invalid() {
        for (lines, key, phrase) in [
            ("node = \"a\"", "fleet.database", "required"),
            ("database = \"\"", "fleet.database", "must not be empty"),
            ("database = \"x\"\nnode = \"a b\"", "fleet.node", "node names must be"),
            ("database = \"x\"\npassword_file = \"secret\"", "fleet.password_file", "absolute path"),
            ("database = \"x\"\nheartbeat_interval_ms = 10", "fleet.heartbeat_interval_ms", "between 100 and"),
            ("database = \"x\"\nheartbeat_interval_ms = 2000\ndead_after_ms = 5000", "fleet.dead_after_ms", "three heartbeat intervals"),
            ("database = \"x\"\nlisten = \"no\"", "fleet.listen", "must be true or false"),
            ("database = \"x\"\nnotify = true", "fleet.notify", "unknown key"),
            ("database = \"x\"\njobs = \"remote\"", "fleet.jobs", #"must be "local" or "fleet""#),
        ] {
            do {
                _ = try parse(lines)
                Issue.record("accepted \(lines)")
            } catch {
                #expect(error.key == key, "\(lines)")
                #expect(error.description.contains(phrase), "\(error)")
            }
        }
    }

    @Test("a password in fleet.database is refused: the configuration is world-readable")
    func passwordInConnectionString() {
        for database in ["host=db dbname=loopd password=hunter2", "postgresql://loopd:hunter2@db/loopd"] {
            #expect {
                _ = try FleetNode.connectionParameters(DaemonConfig.Fleet(database: database), environment: [:], node: "n")
            } throws: { error in
                "\(error)".contains("carries a password") && !"\(error)".contains("hunter2")
            }
        }
    }

    @Test("a connection string libpq cannot read is refused with libpq's reason")
    func unreadableConnectionString() {
        #expect {
            _ = try FleetNode.connectionParameters(DaemonConfig.Fleet(database: "host=db nosuchkeyword=1"), environment: [:], node: "n")
        } throws: { error in
            "\(error)".hasPrefix("fleet.database: ") && "\(error)".contains("nosuchkeyword")
        }
    }

    @Test("the password comes from password_file, else the credential fleet-password, and overrides the string")
    func passwordSources() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("from-file\nsecond line\n".utf8).write(to: URL(fileURLWithPath: dir + "/pw"))
        try Data("from-credential".utf8).write(to: URL(fileURLWithPath: dir + "/fleet-password"))
        var config = DaemonConfig.Fleet(database: "postgresql://loopd@db/loopd")
        let credentials = ["CREDENTIALS_DIRECTORY": dir]

        let fromCredential = try FleetNode.connectionParameters(config, environment: credentials, node: "n")
        #expect(fromCredential.last! == ("password", "from-credential"))
        // The string is expanded where `dbname` sits: keywords after it override it.
        let dbname = try #require(fromCredential.firstIndex { $0.0 == "dbname" })
        #expect(fromCredential[dbname].1 == config.database)
        #expect(dbname < fromCredential.count - 1)

        config.passwordFile = dir + "/pw"
        #expect(try FleetNode.connectionParameters(config, environment: credentials, node: "n").last! == ("password", "from-file"))

        config.passwordFile = nil
        #expect(try !FleetNode.connectionParameters(config, environment: [:], node: "n").contains { $0.0 == "password" })

        config.passwordFile = dir + "/missing"
        #expect(throws: FleetSetupError.self) { try FleetNode.connectionParameters(config, environment: [:], node: "n") }
    }
}
