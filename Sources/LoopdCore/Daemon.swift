import LoopPlatform
import Dispatch
import Glibc
import LoopRuntime
import LoopdProtocol
import Prometheus

/// loopd as a library: the composition root. `loopd`'s `main` builds one
/// from the command line and calls `run()`; tests run one in-process on a
/// thread of their own.
public final class Daemon: @unchecked Sendable {
    /// The configuration it started with.
    public let config: DaemonConfig
    /// Where the configuration came from, re-read on SIGHUP.
    public let configPath: String?
    private let log: DaemonLogger
    private var extraActions: [String: any JobAction] = [:]
    private let listenFD: Int32?
    private let handleSignals: Bool
    private let environment: [String: String]
    // Set by run(), on the daemon's thread, before `ready` is left.
    private(set) var server: Server?
    private(set) var loop: Loop?
    /// Entered until `run()` serves requests.
    private let ready = DispatchGroup()
    /// This daemon's metrics, as the `metrics` request reports them. Its
    /// own registry, not the process-wide default, so daemons sharing a
    /// process (tests, embedders) each report their own.
    public let metricsRegistry = PrometheusCollectorRegistry()

    /// A swift-metrics factory over `metricsRegistry`, for an embedder's
    /// actions to make their own metrics with (`Counter(label:dimensions:factory:)`):
    /// they appear in `metrics` beside the daemon's. No `MetricsSystem`
    /// bootstrap is involved.
    public var metricsFactory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: metricsRegistry) }

    /// - Parameters:
    ///   - configPath: the file `config` was read from, for reloads.
    ///   - listenFD: an already listening socket; nil to use systemd's
    ///     (socket activation) or bind `config.server.socketPath`.
    ///   - handleSignals: take SIGTERM, SIGINT and SIGHUP through a signal
    ///     source (the executable does; in-process tests don't).
    ///   - environment: where NOTIFY_SOCKET and friends are read.
    public init(config: DaemonConfig, configPath: String? = nil, listenFD: Int32? = nil, handleSignals: Bool = false,
                environment: [String: String] = [:], log: DaemonLogger = .silent) {
        self.config = config
        self.configPath = configPath
        self.listenFD = listenFD
        self.handleSignals = handleSignals
        self.environment = environment
        self.log = log
        ready.enter()
    }

    /// Registers an action for jobs to name (before `run()`).
    public func register(action: any JobAction, named name: String) {
        extraActions[name] = action
    }

    /// Runs the daemon on the calling thread's loop until it is shut down.
    /// Returns once every worker has stopped and the journal is committed.
    public func run() throws(DaemonError) {
        // A start that fails still ends `waitUntilReady()` (and leaves the
        // group balanced, which libdispatch requires of a group it frees).
        var announcedReady = false
        defer { if !announcedReady { ready.leave() } }
        if handleSignals { LoopSignalSource.block([SIGTERM, SIGINT, SIGHUP]) }
        let loop = Loop.current
        self.loop = loop
        let notifier = Notifier(environment: environment)
        log(.notice, "loopd \(Server.version) starting", id: .started)

        // Drawn at every start: job ids must not be guessable from one another (`JobIDCodec`).
        let jobIDKey: JobIDKey
        do {
            jobIDKey = try JobIDKey.random()
        } catch {
            throw DaemonError.randomness(error)
        }
        let journal: JobJournal
        do {
            journal = try JobJournal(directory: config.server.stateDirectory, fsync: config.journal.fsync,
                                     retentionSeconds: config.journal.retentionSeconds,
                                     failureRetentionSeconds: config.limits.retentionFailedSeconds,
                                     retainedByteLimit: config.limits.maxRetainedBytes)
        } catch {
            throw DaemonError.journal(error)
        }
        if case let recovered = journal.recovered, recovered.truncatedBytes > 0 {
            var message = "journal: cut \(recovered.truncatedBytes) bytes of a damaged tail at byte "
                + "\(recovered.damagedAt ?? 0) of \(journal.path) (\(recovered.damage ?? "damaged")): what a crash in the "
                + "middle of a commit leaves; no acknowledged job was there"
            if let side = recovered.corruptTailPath { message += "; the cut bytes are kept in \(side)" }
            log(.warning, message)
        }
        let (fd, boundPath) = try listeningSocket()
        let supervisor = ExecSupervisor.make(config, startedAtUnixMs: unixMilliseconds())
        let actions: [String: any JobAction]
        do {
            actions = try Daemon.actionTable(config, extraActions, supervisor: supervisor)
        } catch {
            throw DaemonError.containment(error)
        }
        // What a loopd killed outright left of its jobs.
        let leftovers = supervisor.cgroups?.removeLeftovers() ?? 0
        logContainment(supervisor, removedLeftovers: leftovers)
        let server = Server(config: config, loop: loop, actions: actions, journal: journal, log: log, jobIDKey: jobIDKey,
                            notifier: notifier, metrics: metricsRegistry)
        server.execSupervisor = supervisor
        self.server = server
        // The spin (server.spin_before_sleeping_us) belongs to this daemon's
        // run, not to the thread's loop: restored when the run ends.
        let spinBefore = loop.spinBeforeSleeping
        server.startWorkers()
        server.scheduler.replay(journal, finished: journal.recovered.finished)
        journal.releaseRecoveredJobs()
        server.startSchedules()
        if let fleetConfig = config.fleet {
            let fleet: FleetNode
            do {
                fleet = try FleetNode(config: fleetConfig, environment: environment, scheduler: server.scheduler, loop: loop,
                                      log: log, metrics: FleetMetrics(registry: metricsRegistry))
            } catch {
                throw DaemonError.fleet(error.description)
            }
            server.fleet = fleet
            fleet.start()
        }
        let listener = Listener(fd: fd, path: boundPath, server: server)
        server.listener = listener
        listener.attach(to: loop)
        server.monitor.startStatusReports()
        if let interval = watchdogInterval() {
            server.monitor.startWatchdog(interval: interval, stallThreshold: .milliseconds(config.server.stallThresholdMs))
        }
        let signals = handleSignals ? installSignals(loop, server) : nil

        log(.notice, "loopd ready: \(server.workers.count) workers, socket \(boundPath ?? "from systemd")", id: .ready)
        notifier.ready(status: server.monitor.statusLine())
        ready.leave()
        announcedReady = true

        while server.state != Server.State.stopped {
            loop.run(mode: .default, timeout: nil)
        }
        loop.spinBeforeSleeping = spinBefore
        server.fleet?.leave(within: .seconds(2))
        signals?.invalidate()
        // Job-end records the last batch held, whatever the level lets through below.
        log.flushHeld()
        log(.notice, "loopd stopped")
    }

    /// Says once how exec jobs are contained here.
    private func logContainment(_ supervisor: ExecSupervisor, removedLeftovers: Int) {
        guard config.actions.values.contains(where: { $0.exec != nil }) else { return }
        var parts: [String] = []
        parts.append(config.exec.user.isEmpty ? "exec jobs run as loopd's own user" : "exec jobs run as \(config.exec.user) unless their action names another")
        if let cgroups = supervisor.cgroups {
            let controllers = cgroups.controllers.isEmpty ? "no controllers" : cgroups.controllers.sorted().joined(separator: ", ")
            parts.append("a cgroup each under \(cgroups.root) (\(controllers))")
            if removedLeftovers > 0 { parts.append("removed \(removedLeftovers) cgroups left by a loopd that was killed") }
        } else {
            parts.append("no job cgroups (\(supervisor.cgroupsUnavailable ?? "unavailable")): a job's tree is its process group")
        }
        let abi = Privileges.landlockABI
        if config.exec.landlock == .off || abi < ChildProcess.LandlockScope.minimumABI {
            parts.append("no Landlock scopes (\(config.exec.landlock == .off ? "[exec] landlock = \"off\"" : "Landlock ABI \(abi), scopes need 6"))"
                         + ": jobs running as the same user can signal each other")
        } else {
            parts.append("each in a Landlock domain of its own (ABI \(abi))")
        }
        log(config.exec.user.isEmpty ? .warning : .notice, parts.joined(separator: "; "))
    }

    /// The socket to accept on: given, passed by systemd, or bound here (the
    /// second element is the path to unlink at exit, only when bound here).
    private func listeningSocket() throws(DaemonError) -> (Int32, String?) {
        if let listenFD { return (listenFD, nil) }
        if environment["LISTEN_FDS"] != nil, let fd = SocketActivation.listeningSocket(named: "loopd") {
            return (fd, nil)  // systemd owns the node: never unlink it
        }
        do {
            let fd = try UnixSocket.listen(path: config.server.socketPath, mode: config.server.socketMode,
                                           group: config.server.socketGroupID)
            return (fd, config.server.socketPath)
        } catch {
            throw DaemonError.listen(error)
        }
    }

    private func installSignals(_ loop: Loop, _ server: Server) -> LoopSignalSource? {
        do {
            let source = try LoopSignalSource(signals: [SIGTERM, SIGINT, SIGHUP]) { [unowned self] sig in
                if sig == SIGHUP { reload(server) } else { server.beginShutdown() }
            }
            loop.add(source, forMode: .default)
            return source
        } catch {
            log(.error, "cannot receive signals: \(error)")
            return nil
        }
    }

    /// SIGHUP: re-read the file, refuse it whole if invalid, else apply what
    /// can change while running.
    private func reload(_ server: Server) {
        server.notifier.reloading()
        defer { server.notifier.ready(status: server.monitor.statusLine()) }
        guard let configPath else {
            log(.warning, "SIGHUP: no configuration file to re-read", id: .reloadFailed)
            return
        }
        do {
            let fresh = try ConfigLoader.load(path: configPath)
            server.apply(fresh, actions: try Daemon.actionTable(fresh, extraActions, supervisor: server.execSupervisor))
        } catch {
            log(.error, "SIGHUP: new configuration refused, keeping the old one: \(error)", id: .reloadFailed)
        }
    }

    /// Blocks until `run()` is serving requests, or has thrown (for tests and embedders).
    public func waitUntilReady() { ready.wait() }

    /// Stops accepting, lets running jobs finish within the grace period,
    /// commits the journal and stops the workers. Any thread.
    public func shutdown() {
        ready.wait()
        guard let loop, let server else { return }
        loop.perform(inModes: [.common]) { server.beginShutdown() }
    }

    /// The actions jobs may name: the built-ins, the config's exec actions
    /// contained as this host allows (or the first setting it cannot
    /// honour), and the embedder's.
    static func actionTable(_ config: DaemonConfig, _ extra: [String: any JobAction],
                            supervisor: ExecSupervisor) throws(ExecContainment.Refusal) -> [String: any JobAction] {
        let containment = try ExecContainment.resolve(config, host: .current(), supervisor: supervisor)
        var table: [String: any JobAction] = [
            "echo": EchoAction(), "noop": NoopAction(), "sleep": SleepAction(), "fail": FailAction(),
        ]
        if config.server.debugActions { table["stall"] = StallAction() }
        for (name, action) in config.actions {
            guard let exec = action.exec, let contained = containment[name] else { continue }
            table[name] = ExecAction(name: name, spec: exec, containment: contained, supervisor: supervisor)
        }
        for (name, action) in extra { table[name] = action }
        return table
    }
}

/// Why the daemon could not start.
public enum DaemonError: Error, Sendable, CustomStringConvertible {
    case journal(JournalError)
    case listen(PlatformError)
    /// An exec action's containment this host cannot honour (the key and why).
    case containment(key: String, reason: String)

    static func containment(_ refusal: ExecContainment.Refusal) -> DaemonError {
        .containment(key: refusal.key, reason: refusal.reason)
    }
    /// The kernel's random generator could not be read for the job ids' key.
    case randomness(PlatformError)
    /// `[fleet]` cannot be acted on: libpq is missing, or the connection settings are wrong.
    case fleet(String)

    public var description: String {
        switch self {
        case .journal(let e): "cannot open the journal: \(e)"
        case .listen(let e): "cannot listen: \(e)"
        case .containment(let key, let reason): "cannot contain exec jobs as configured: \(key): \(reason)"
        case .randomness(let e): "cannot draw the job ids' key: \(e)"
        case .fleet(let why): "cannot join the fleet: \(why)"
        }
    }
}
