import LoopPlatform
import LoopdProtocol

/// The `loopd` executable's whole behaviour, kept in the library so the
/// executable is a one-line `main`.
public enum DaemonMain {
    static let usage = """
    usage: loopd [--config PATH] [--check-config] [--version]
           loopd [--config PATH] --fleet-migrate
           loopd --salvage-journal JOURNAL

    Runs the loopd daemon in the foreground.
      --config PATH    configuration file (default: ./Config/loopd.toml if it exists,
                       else /etc/loopd/loopd.toml)
      --check-config   validate the configuration and exit
      --version        print the version and exit
      --fleet-migrate  bring the [fleet] database's schema up to date and exit
                       (for fleets with fleet.migrate = false)
      --salvage-journal JOURNAL
                       with loopd stopped: rewrite a journal loopd refused as
                       corrupt (STATE_DIR/journal.log) keeping every intact
                       record; the file as it was is saved beside it
    """

    /// The `loopd` executable: runs with the process's arguments and exits
    /// with `run`'s status.
    public static func main() -> Never {
        exitProcess(run(arguments: Array(CommandLine.arguments.dropFirst())))
    }

    /// Parses `arguments` (without the program name), runs, returns the exit status.
    public static func run(arguments: [String]) -> Int32 {
        var configPath: String?
        var checkOnly = false
        var migrateOnly = false
        var args = arguments[...]
        while let a = args.popFirst() {
            switch a {
            case "--config":
                guard let p = args.popFirst() else { return fail("--config needs a path\n\(usage)", status: 2) }
                configPath = p
            case "--check-config":
                checkOnly = true
            case "--fleet-migrate":
                migrateOnly = true
            case "--salvage-journal":
                guard let p = args.popFirst() else { return fail("--salvage-journal needs a path\n\(usage)", status: 2) }
                guard args.isEmpty else { return fail("--salvage-journal takes no other arguments\n\(usage)", status: 2) }
                return salvage(p)
            case "--version":
                print(LoopdVersion.current)
                return 0
            case "-h", "--help":
                print(usage)
                return 0
            default:
                return fail("unknown argument \(a)\n\(usage)", status: 2)
            }
        }
        let path = configPath ?? ConfigLoader.defaultPath()
        let config: DaemonConfig
        do {
            config = try ConfigLoader.load(path: path)
        } catch {
            return fail("loopd: \(error)", status: 1)
        }
        if checkOnly {
            print("\(path): ok")
            return 0
        }
        if migrateOnly { return migrateFleet(config, path: path) }
        // Started by systemd as its transient user with the capabilities exec
        // jobs need, loopd is not dumpable, and Swift's crash backtracer
        // (run as the same user) could not read it. Only loopd runs as that
        // user: its exec children run as another.
        Privileges.restoreDumpable()
        let environment = ProcessEnvironment.current()
        let daemon = Daemon(config: config, configPath: path, handleSignals: true, environment: environment,
                            log: .standard(level: config.server.logLevel, environment: environment))
        do {
            try daemon.run()
        } catch {
            return fail("loopd: \(error)", status: 1)
        }
        return 0
    }

    /// `--salvage-journal`: what it found and did on stdout; exit 0, or 1
    /// when the file could not be salvaged.
    static func salvage(_ path: String) -> Int32 {
        do {
            let report = try JournalSalvage.salvage(path: path)
            for line in report.lines(path: path) { print(line) }
            return 0
        } catch {
            return fail("loopd: \(error)", status: 1)
        }
    }

    /// `--fleet-migrate`: exit 0 once the schema is current, 1 when it
    /// cannot be made so (unreachable, newer than this loopd, refused).
    static func migrateFleet(_ config: DaemonConfig, path: String) -> Int32 {
        guard let fleet = config.fleet else { return fail("loopd: \(path) has no [fleet] table: there is no fleet database to migrate", status: 1) }
        switch FleetMigrator.migrateOnce(fleet, environment: ProcessEnvironment.current()) {
        case .success(.current(let version)):
            print("fleet schema: already at version \(version)")
            return 0
        case .success(.migrated(let from, let to)):
            print("fleet schema: migrated from version \(from) to \(to)")
            return 0
        case .failure(let error):
            return fail("loopd: --fleet-migrate: \(error)", status: 1)
        }
    }

    private static func fail(_ message: String, status: Int32) -> Int32 {
        writeLogBytes(2, Array((message + "\n").utf8))
        return status
    }
}
