import Dispatch
import Glibc
import LoopRuntime
import LoopdProtocol

/// loopd as a library: the composition root. `loopd`'s `main` builds one
/// from the command line and calls `run()`; tests run one in-process on a
/// thread of their own.
public final class Daemon: @unchecked Sendable {
    /// The configuration it runs with.
    public let config: DaemonConfig
    private let log: LogSink
    private var extraActions: [String: any JobAction] = [:]
    private let listenFD: Int32?
    private let handleSignals: Bool
    // Set by run(), on the daemon's thread.
    private var server: Server?
    private var loop: Loop?
    /// Entered until `run()` serves requests.
    private let ready = DispatchGroup()

    /// - Parameters:
    ///   - listenFD: an already listening socket (socket activation); nil to bind `config.server.socketPath`.
    ///   - handleSignals: take SIGTERM, SIGINT and SIGHUP through a signal source (the executable does; in-process tests don't).
    public init(config: DaemonConfig, listenFD: Int32? = nil, handleSignals: Bool = false, log: @escaping LogSink = stderrLogSink) {
        self.config = config
        self.listenFD = listenFD
        self.handleSignals = handleSignals
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
        if handleSignals { LoopSignalSource.block([SIGTERM, SIGINT, SIGHUP]) }
        let loop = Loop.current
        self.loop = loop

        let journal: JobJournal
        do {
            journal = try JobJournal(directory: config.server.stateDirectory, fsync: config.journal.fsync,
                                     retentionSeconds: config.journal.retentionSeconds)
        } catch {
            throw DaemonError.journal(error)
        }
        let server = Server(config: config, loop: loop, actions: actionTable(), journal: journal, log: log)
        self.server = server
        if journal.recovered.truncatedBytes > 0 {
            log(.warning, "journal: cut \(journal.recovered.truncatedBytes) bytes of a torn last record", [])
        }

        let fd: Int32
        var boundPath: String? = nil
        if let listenFD {
            fd = listenFD
        } else {
            do {
                fd = try UnixSocket.listen(path: config.server.socketPath, mode: config.server.socketMode, group: config.server.socketGroupID)
            } catch {
                throw DaemonError.listen(error)
            }
            boundPath = config.server.socketPath
        }

        server.startWorkers()
        server.installCommitObserver()
        server.replay(journal.recovered.pending)
        let listener = Listener(fd: fd, path: boundPath, server: server)
        server.listener = listener
        listener.attach(to: loop)
        var signals: LoopSignalSource?
        if handleSignals {
            signals = try? LoopSignalSource(signals: [SIGTERM, SIGINT, SIGHUP]) { [unowned self] sig in
                if sig == SIGHUP {
                    log(.notice, "SIGHUP: configuration reload is not supported in this build; ignoring", [])
                } else {
                    shutdown()
                }
            }
            if let signals { loop.add(signals, forMode: .default) }
        }
        log(.notice, "loopd ready: \(server.workers.count) workers, socket \(config.server.socketPath)", [])
        ready.leave()

        while server.state != Server.State.stopped {
            loop.run(mode: .default, timeout: nil)
        }
        signals?.invalidate()
        log(.notice, "loopd stopped", [])
    }

    /// Blocks until `run()` is serving requests (for tests and embedders).
    public func waitUntilReady() { ready.wait() }

    /// Stops accepting, lets running jobs finish within the grace period,
    /// commits the journal and stops the workers. Any thread.
    public func shutdown() {
        ready.wait()
        guard let loop, let server else { return }
        loop.perform(inModes: [.common]) { server.beginShutdown() }
    }

    private func actionTable() -> [String: any JobAction] {
        var table: [String: any JobAction] = [
            "echo": EchoAction(), "noop": NoopAction(), "sleep": SleepAction(), "fail": FailAction(),
        ]
        if config.server.debugActions { table["stall"] = StallAction() }
        for (name, action) in config.actions {
            if let exec = action.exec { table[name] = ExecAction(name: name, spec: exec) }
        }
        for (name, action) in extraActions { table[name] = action }
        return table
    }
}

/// Why the daemon could not start.
public enum DaemonError: Error, Sendable, CustomStringConvertible {
    case journal(JournalError)
    case listen(SystemError)

    public var description: String {
        switch self {
        case .journal(let e): "cannot open the journal: \(e)"
        case .listen(let e): "cannot listen: \(e)"
        }
    }
}
