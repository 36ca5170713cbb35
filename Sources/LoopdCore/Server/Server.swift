import LoopPlatform
import LoopRuntime
import LoopdProtocol
import Prometheus

/// The daemon's main-thread front: client connections, request routing,
/// and the service manager's view. Jobs belong to `scheduler`. Every
/// method runs on the main loop's thread.
final class Server: @unchecked Sendable {
    /// The configuration in force (replaced by a reload).
    var config: DaemonConfig
    let loop: Loop
    let log: DaemonLogger
    let scheduler: JobScheduler
    /// STATUS=, the watchdog and the other notifications to systemd.
    let monitor: ServiceMonitor
    /// The configured schedules (`[schedules.NAME]`), firing on this loop.
    let schedules: ScheduleBook
    var connections: [Int: Connection] = [:]
    private var nextConnectionID = 1
    var listener: Listener?
    /// This daemon's place in its fleet; nil without `[fleet]`.
    var fleet: FleetNode?
    var state = State.running
    /// The exec jobs' cgroups and live trees (shutdown waits for those).
    var execSupervisor = ExecSupervisor(cgroups: nil, unavailable: "no exec actions")
    /// The shutdown grace has passed and the running jobs' trees are being stopped.
    var stoppingTrees = false
    /// Scratch space for socket reads, shared by all connections (one thread).
    @exclusivity(unchecked) var readBuffer = [UInt8](repeating: 0, count: 65_536)
    @exclusivity(unchecked) private var flushQueue: [Connection] = []
    /// An empty list with capacity that the flush trades `flushQueue` for.
    @exclusivity(unchecked) private var flushing: [Connection] = []
    private var flushScheduled = false
    /// The flush's block, made once: a closure made per pass would be an allocation per pass.
    private lazy var flushBlock: @Sendable () -> Void = { [unowned self] in flushQueued() }
    /// Connections with requests buffered beyond their share of a pass
    /// (`limits.max_requests_per_pass`), served in turn once per pass.
    private var backlog: [Connection] = []
    private var backlogScheduled = false

    enum State { case running, draining, stopped }

    /// - Parameters:
    ///   - jobIDKey: the run's secret for its job ids (`JobIDKey.random()`).
    ///   - metrics: the registry the `metrics` request reports; one per
    ///     server, so daemons sharing a process keep theirs apart.
    init(config: DaemonConfig, loop: Loop, actions: [String: any JobAction], journal: JobJournal?, log: DaemonLogger,
         jobIDKey: JobIDKey, notifier: Notifier = Notifier(environment: [:]),
         metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.config = config
        self.loop = loop
        var log = log
        log.holdJobEnds(until: loop)
        self.log = log
        scheduler = JobScheduler(config: config, loop: loop, actions: actions, journal: journal, log: log,
                                 jobIDKey: jobIDKey, metrics: DaemonMetrics(registry: metrics))
        monitor = ServiceMonitor(notifier: notifier, scheduler: scheduler, loop: loop, log: log)
        schedules = ScheduleBook(log: log, registry: ScheduleMetrics.Registry(registry: metrics),
                                 stateFile: journal.map { _ in
                                     ScheduleStateFile(directory: config.server.stateDirectory, fsync: config.journal.fsync)
                                 },
                                 hostKey: ScheduleBook.currentHostKey())
        schedules.runner = scheduler
    }

    /// Starts the schedules' timer: after the journal's jobs are back, so an
    /// overlap check finds a durable run from before the restart.
    func startSchedules() {
        schedules.start(config.schedules, on: loop)
    }

    var workers: [Worker] { scheduler.workers }
    var notifier: Notifier { monitor.notifier }

    /// Starts the workers; each returns once its loop runs.
    func startWorkers() {
        for w in config.workers { scheduler.addWorker(w) }
        applySpin()
    }

    /// `server.spin_before_sleeping_us` on the main loop and every worker's
    /// loop (at start, for workers a reload adds, and on reload).
    func applySpin() {
        let spin = Duration.microseconds(config.server.spinBeforeSleepingUs)
        loop.spinBeforeSleeping = spin
        for w in workers { w.thread.loop.spinBeforeSleeping = spin }
    }

    // MARK: connections

    func accepted(_ fd: Int32) {
        guard let peer = UnixSocket.peer(fd) else {
            Descriptor.close(fd)
            return
        }
        if connections.count >= config.limits.maxConnections || state != .running {
            let code: ErrorCode = state == .running ? .busy : .shuttingDown
            let line = Response.error(id: nil, ProtocolError(code, code == .busy ? "too many connections" : "loopd is stopping"))
            _ = line.utf8CString.withUnsafeBytes { UnixSocket.write(fd, UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
            Descriptor.close(fd)
            return
        }
        if let refusal = scheduler.connectionQuotaRefusal(uid: peer.uid) {
            // As `busy`: one line without an id, then the connection closes.
            let line = Response.error(id: nil, refusal)
            _ = line.utf8CString.withUnsafeBytes { UnixSocket.write(fd, UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
            Descriptor.close(fd)
            return
        }
        scheduler.connectionOpened(uid: peer.uid)
        let c = Connection(id: nextConnectionID, fd: fd, peer: peer, server: self, limits: config.limits)
        nextConnectionID += 1
        connections[c.id] = c
        c.attach(to: loop)
    }

    func connectionClosed(_ c: Connection) {
        connections[c.id] = nil
        scheduler.connectionClosed(c.sink, uid: c.peer.uid)
    }

    /// Flushes `c` once the current batch of work is done.
    func scheduleFlush(_ c: Connection) {
        flushQueue.append(c)
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.perform(flushBlock)
    }

    private func flushQueued() {
        flushScheduled = false
        // The job-end lines of this batch go out before its replies.
        log.flushHeld()
        swap(&flushing, &flushQueue)
        for c in flushing { c.flush() }
        flushing.removeAllKeepingCapacity()
    }

    /// Serves `c`'s next share of requests in the next pass, after every
    /// connection already waiting: round robin, one share each per pass.
    /// The block that serves the backlog is queued anew each pass while it
    /// is not empty, so the loop does not sleep on buffered requests and
    /// still turns (its timers, the other sockets) between two shares.
    func scheduleBacklog(_ c: Connection) {
        backlog.append(c)
        guard !backlogScheduled else { return }
        backlogScheduled = true
        loop.perform(inModes: [.common]) { [unowned self] in
            backlogScheduled = false
            let turn = backlog
            backlog.removeAll(keepingCapacity: true)
            for c in turn { c.serveBacklog() }
        }
    }
}
