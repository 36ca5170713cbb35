import LoopRuntime
import LoopdProtocol

/// The daemon's main-thread state: connections, workers, jobs, journal.
/// Every method runs on the main loop's thread. Workers reach it by
/// performing blocks on that loop, after putting the ends they report in
/// `reportedEnds`, and write the replies of waited jobs to the connections'
/// `ReplyChannel`s themselves.
final class Server: @unchecked Sendable {
    /// The configuration in force (replaced by a reload).
    var config: DaemonConfig
    let loop: Loop
    let log: DaemonLogger
    let notifier: Notifier
    var actions: [String: any JobAction]
    private(set) var workers: [Worker] = []
    private(set) var workersByName: [String: Worker] = [:]
    var jobs: [String: Job] = [:]
    /// Finished jobs stay in `jobs`, answering `status`, while in this window.
    var finishedWindow = FinishedWindow(capacity: 100_000)
    var connections: [Int: Connection] = [:]
    private var nextConnectionID = 1
    var stats = Stats()
    /// Job ends the workers reported, waiting for `recordFinishedJobs()`
    /// (the one field here that workers touch: it locks itself).
    let reportedEnds = ReportedEnds()
    var journal: JobJournal?
    /// Armed while the journal retains finished durable jobs: forgets them
    /// once past retention even if no durable work comes to do it.
    var journalExpiryTimer: LoopTimer?
    /// Durable jobs appended to the journal, waiting for the next commit.
    var awaitingCommit: [(job: Job, connection: Connection?, id: RequestID?)] = []
    var listener: Listener?
    var state = State.running
    /// Scratch space for socket reads, shared by all connections (one thread).
    var readBuffer = [UInt8](repeating: 0, count: 65_536)
    private var flushQueue: [Connection] = []
    private var flushScheduled = false
    private var jobIDs: JobIDGenerator
    private(set) var commitObserver: LoopObserver?
    /// Whether `commitObserver` is on the loop now (see `armCommit()`).
    private(set) var commitArmed = false
    let daemonUID: UInt32
    /// The STATUS= text last sent.
    var lastStatus = ""
    /// Workers whose current stall was logged already.
    var stallsReported: Set<String> = []

    enum State { case running, draining, stopped }

    init(config: DaemonConfig, loop: Loop, actions: [String: any JobAction], journal: JobJournal?, log: DaemonLogger, notifier: Notifier = Notifier(environment: [:])) {
        self.config = config
        self.loop = loop
        self.actions = actions
        self.journal = journal
        var log = log
        log.holdJobEnds(until: loop)
        self.log = log
        self.notifier = notifier
        self.daemonUID = currentUID()
        jobIDs = JobIDGenerator(startedAtUnixMs: unixMilliseconds())
    }

    /// Starts the workers; each `Worker` returns once its loop runs.
    func startWorkers() {
        for w in config.workers { addWorker(name: w.name, mode: w.mode) }
        applySpin()
    }

    /// `server.spin_before_sleeping_us` on the main loop and every worker's
    /// loop (at start, for workers a reload adds, and on reload).
    func applySpin() {
        let spin = Duration.microseconds(config.server.spinBeforeSleepingUs)
        loop.spinBeforeSleeping = spin
        for w in workers { w.thread.loop.spinBeforeSleeping = spin }
    }

    func addWorker(name: String, mode: String) {
        let loop = self.loop
        let ends = reportedEnds
        let worker = Worker(name: name, mode: mode, mainLoop: loop, report: { finished in
            ends.append(finished)
        }, wake: { [unowned self] unwritten in
            loop.perform(inModes: [.common]) {
                self.recordFinishedJobs()
                // Replies a worker encoded but left to this thread: they go
                // out with this batch's own.
                for id in unwritten { if let c = self.connections[id] { self.scheduleFlush(c) } }
            }
        }, attention: { [unowned self] connectionID in
            // A worker's write left bytes unsent, failed, or settled a
            // draining connection: flush it, or close it.
            loop.perform(inModes: [.common]) { self.connections[connectionID]?.flush() }
        })
        workers.append(worker)
        workersByName[name] = worker
    }

    /// Group commit: one journal write and fsync per main-loop pass, by an
    /// observer of `.beforeWaiting`. The observer is on the loop only while
    /// the journal holds records to commit (`armCommit()` puts it there):
    /// a loop with a waiting observer polls its descriptors once more every
    /// pass (R17 step 5), a system call per pass that jobs without `durable`
    /// would pay for nothing. Also arms the expiry of finishes retained from
    /// before a restart.
    func installCommitObserver() {
        if let journal { scheduleJournalExpiry(journal) }
        let o = LoopObserver(activities: .beforeWaiting, repeats: true, order: Int.max) { [unowned self] _, _ in
            commitJournal()
            if journal?.hasUncommitted != true { disarmCommit() }
        }
        commitObserver = o
        armCommit()
    }

    /// Puts the commit observer on the loop if the journal has records to
    /// commit; called after every append. Main thread.
    func armCommit() {
        guard !commitArmed, journal?.hasUncommitted == true, let o = commitObserver else { return }
        commitArmed = true
        loop.add(o, forMode: .common)
    }

    /// Takes the commit observer off the loop once nothing waits for a commit.
    private func disarmCommit() {
        guard commitArmed, let o = commitObserver else { return }
        commitArmed = false
        loop.remove(o, forMode: .common)
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
        let c = Connection(id: nextConnectionID, fd: fd, peer: peer, server: self, limits: config.limits)
        nextConnectionID += 1
        connections[c.id] = c
        c.attach(to: loop)
    }

    func connectionClosed(_ c: Connection) {
        connections[c.id] = nil
    }

    /// Flushes `c` once the current batch of work is done.
    func scheduleFlush(_ c: Connection) {
        flushQueue.append(c)
        guard !flushScheduled else { return }
        flushScheduled = true
        loop.perform(inModes: [.common]) { [unowned self] in
            flushScheduled = false
            // The job-end lines of this batch go out before its replies.
            log.flushHeld()
            let queue = flushQueue
            flushQueue.removeAll(keepingCapacity: true)
            for c in queue { c.flush() }
        }
    }

    func nextJobID() -> String {
        jobIDs.next()
    }

    /// Worker for a placement, or the error to reply.
    func worker(for placement: Placement) throws(ProtocolError) -> Worker {
        switch placement {
        case .worker(let name):
            guard let w = workersByName[name] else { throw ProtocolError(.unknownWorker, "no worker named \"\(name)\"") }
            return w
        case .any:
            return workers.min { $0.outstanding < $1.outstanding }!
        case .key(let key):
            return workers[Int(fnv1a(key) % UInt64(workers.count))]
        }
    }
}

/// FNV-1a: a stable hash (Swift's Hasher is seeded per process), so a key
/// lands on the same worker across restarts.
func fnv1a(_ s: String) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in s.utf8 {
        h ^= UInt64(b)
        h = h &* 0x100_0000_01b3
    }
    return h
}
