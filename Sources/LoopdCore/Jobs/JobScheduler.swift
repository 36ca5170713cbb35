import Glibc
import LoopPlatform
import LoopRuntime
import LoopdProtocol
import Prometheus

/// Who sends requests about jobs: where the replies go and who it is. One
/// per connection, made once (a reference, so a request passes one pointer).
final class Requester: Sendable {
    let sink: ReplySink
    let owner: JobOwner
    /// The owner as the connection's jobs keep it (one reference for all of them).
    let submitter: JobSubmitter

    init(sink: ReplySink, owner: JobOwner) {
        self.sink = sink
        self.owner = owner
        submitter = JobSubmitter(owner)
    }
}

/// The owner of every job's life: acceptance, placement, the hand-over to
/// a worker's lane, the end, the replies it owes, and retention; what must
/// outlive the process goes to the job's store (`JobStore`). This file is
/// the lifecycle core: the job table, the counts and the key order are set
/// here only; the requests (`+Requests`, `+Rerun`), the figures, replay and
/// quotas read them and change jobs through the core's methods, and
/// delays, expiries and backoffs are `JobTiming`'s. Each change of a job's state goes through `move(_:to:)`.
/// Main thread only (the loop blocks and timers that capture it run on the
/// main loop); the lanes reach it through `LaneMailbox`.
final class JobScheduler: @unchecked Sendable {
    let loop: Loop
    let log: DaemonLogger
    /// The limits and allow lists in force (replaced by a reload).
    private(set) var config: DaemonConfig
    /// The actions by name; a reload that replaces them makes every
    /// queue's `JobKind`s anew.
    @exclusivity(unchecked) private(set) var actions: [String: any JobAction] {
        didSet {
            for q in queues { q.forgetKinds() }
            lastAction = nil
        }
    }
    /// The action the last submit named: a client's submits come in runs of
    /// one action, so the run's later ones hash no name.
    @exclusivity(unchecked) private var lastAction: NamedAction?
    /// The local journal of durable jobs and its group commit; nil without a state directory.
    let journalStore: JournalStore?
    /// The fleet's store of the attempts this node claimed; nil outside a fleet (`join(fleet:laneFreed:)`).
    private(set) var fleetStore: (any JobStore)?
    let daemonUID: UInt32
    /// loopd itself, as the submitter of its schedules' jobs.
    let scheduleSubmitter: JobSubmitter
    /// Every worker's queue, in configuration order.
    private(set) var queues: [WorkerQueue] = []
    @exclusivity(unchecked) private var queuesByName: [String: WorkerQueue] = [:]
    /// The slots of the jobs' kinds in the `jobs` index.
    private let kindSlots = KindSlots()
    /// The queues `any` and `key` place on, in configuration order.
    @exclusivity(unchecked) private var automatic: [WorkerQueue] = []
    @exclusivity(unchecked) private(set) var table: JobTable
    /// What each uid holds now, for `[quotas]` (`JobScheduler+Quotas`).
    let ledger: UserLedger
    let waiters: JobWaiters
    @exclusivity(unchecked) private(set) var stats = Stats()
    /// The Prometheus metrics of jobs, workers and the journal.
    let metrics: DaemonMetrics
    /// Set in `init` before anything can post to it (implicitly unwrapped
    /// only because its block refers to this scheduler).
    private(set) var mailbox: LaneMailbox!
    /// An empty list with capacity that `recordReports` trades the mailbox's full one for.
    private var spareReports: [LaneReport] = []
    /// `recordReports` is taking a batch: it writes the job-end lines the
    /// batch holds once it is done (`DaemonLogger.jobEnded(flushArranged:)`).
    private var takingReports = false
    @exclusivity(unchecked) private(set) var jobIDs: JobIDGenerator
    /// Delays, expiries and backoffs (implicitly unwrapped only because
    /// it hands due jobs back to this scheduler; set in `init`).
    private(set) var timing: JobTiming!
    /// The priority each keyed job runs at (`JobPriority`).
    @exclusivity(unchecked) private(set) var keyOrder = KeyOrder()
    /// Jobs accepted and not yet ended, over all workers.
    private(set) var outstandingJobs = 0
    /// Returns free memory to the kernel once the daemon is idle after a
    /// burst (implicitly unwrapped only because it asks this scheduler).
    private(set) var idleTrim: IdleTrim!
    /// False once the daemon is stopping: submits are refused.
    private(set) var isAccepting = true
    /// Whether each move of a job is logged (at debug): decided once, as
    /// three moves per job would otherwise each ask the handler.
    private let logsMoves: Bool
    /// The `unique_key`s of the jobs the daemon knows, per uid.
    var uniqueKeys = UniqueKeys()
    /// How many jobs the last indexed `jobs` page looked at (nil: it
    /// walked the table); tests read it to show a page's cost does not
    /// grow with jobs the filters leave out.
    var lastPageVisited: Int?
    /// Told when a job's end frees a place on its worker: the fleet may
    /// claim work for it.
    private(set) var laneFreed: ((WorkerQueue) -> Void)?

    /// - Parameter jobIDKey: the run's secret for its job ids (`JobIDKey.random()`).
    init(config: DaemonConfig, loop: Loop, actions: [String: any JobAction], journal: JobJournal?, log: DaemonLogger,
         jobIDKey: JobIDKey, metrics: DaemonMetrics = DaemonMetrics(registry: PrometheusCollectorRegistry())) {
        self.config = config
        self.metrics = metrics
        self.loop = loop
        self.actions = actions
        let jobIDs = JobIDGenerator(key: jobIDKey)
        self.jobIDs = jobIDs
        table = JobTable(retainedCapacity: 100_000, retainedByteLimit: config.limits.maxRetainedBytes,
                         ids: jobIDs.codec)
        table.keepFailures(config.limits)
        self.log = log
        let ledger = UserLedger()
        self.ledger = ledger
        waiters = JobWaiters(ledger: ledger)
        logsMoves = log.isEnabled(.debug)
        journalStore = journal.map { JournalStore(journal: $0, loop: loop, log: log) }
        daemonUID = currentUID()
        scheduleSubmitter = JobSubmitter(JobOwner(uid: daemonUID, gid: getgid()))
        mailbox = LaneMailbox(mainLoop: loop) { [unowned self] in recordReports() }
        waiters.onOccupied = { [unowned self] in mailbox.wantEveryReport(.waiters, $0) }
        idleTrim = IdleTrim(loop: loop, log: log) { [unowned self] in outstandingJobs > 0 }
        timing = JobTiming(loop: loop, maxBackoffMs: config.limits.maxRetryBackoffMs,
                           release: { [unowned self] job in
                               move(job, to: .queued)
                               job.queue.handOver(job)
                           },
                           expire: { [unowned self] job in expire(job) })
        journalStore?.install { [unowned self] in commitJournal() }
        let fsyncSeconds = metrics.journalFsyncSeconds
        journal?.syncTimed = { fsyncSeconds.record(Double($0) / 1e9) }
    }

    var journal: JobJournal? { journalStore?.journal }

    /// Makes this daemon a node of a fleet: the attempts it claims are kept
    /// in `store`, and `laneFreed` is told at each end of a job.
    func join(fleet store: any JobStore, laneFreed: @escaping (WorkerQueue) -> Void) {
        fleetStore = store
        self.laneFreed = laneFreed
        // A freed lane is told at once: the fleet claims work for it.
        mailbox.wantEveryReport(.fleet, true)
    }

    /// Where `job` is kept beyond this process: the fleet's store for an
    /// attempt of a fleet job, the journal for a durable job, else nowhere.
    func store(of job: Job) -> (any JobStore)? {
        if job.origin.submitter.fleetRun != nil { return fleetStore }
        return job.durable ? journalStore : nil
    }

    /// Starts a worker and its lane.
    func addWorker(_ config: DaemonConfig.Worker) {
        let queue = WorkerQueue(worker: Worker(config), mailbox: mailbox, mainLoop: loop, metrics: metrics,
                                kindSlots: kindSlots)
        queues.append(queue)
        queuesByName[config.name] = queue
        if config.placement == .auto { automatic.append(queue) }
    }

    func queue(named name: String) -> WorkerQueue? { queuesByName[name] }

    var workers: [Worker] { queues.map(\.worker) }

    // MARK: the life of a job

    /// Moves `job` to `next`: every change of a job's state comes through
    /// here (and `Job.advance(to:)`, which refuses an illegal one), and is
    /// logged here, at debug.
    func move(_ job: Job, to next: Job.State) {
        let filed = JobIndex.Filed(job.state, of: job)
        let previous = job.advance(to: next)
        if let filed {
            let refiled = JobIndex.Filed(next, of: job)
            if refiled != filed {
                table.refile(job, from: filed, to: refiled)
                if filed == .waiting { job.queue.countWaiting(job, -1) }
                if refiled == .waiting { job.queue.countWaiting(job, 1) }
            }
        }
        if logsMoves { log(.debug, "job \(job.id): \(previous) -> \(next)", [(.jobID, job.id)]) }
    }

    /// A `submit`: accepts the job and acknowledges it now (`wait: false`),
    /// after its commit (durable), or when it ends (`wait`).
    func submit(_ s: consuming SubmitRequest, id: RequestID?, from r: Requester) {
        if answerDuplicate(s, id: id, from: r) { return }
        let waits = s.wait
        let reply = waits ? ReplyAddress(sink: r.sink, requestID: id) : nil
        let job: Job
        do {
            job = try accept(s, submitter: r.submitter, jobID: nil, submittedAt: unixMilliseconds(), reply: reply)
        } catch {
            r.sink.send { Response.error(id: id, error, into: &$0) }
            return
        }
        reply?.sink.owe()
        dispatch(job, ack: waits ? nil : ReplyAddress(sink: r.sink, requestID: id))
    }

    /// Sends an accepted job on its way: a durable one waits for the next
    /// commit, then runs; `ack` (a submit that did not wait) is answered
    /// once the job is accepted for good.
    func dispatch(_ job: Job, ack: ReplyAddress?) {
        if job.durable {
            hold(job, ack: ack)
        } else if job.queue.heldForCommit > 0 {
            // A durable job ahead of this one on the same worker waits for
            // the commit: so does this one, or it would overtake it. It
            // needs no journal, so it is acknowledged now and runs after
            // the commit whether or not the commit succeeds.
            hold(job, ack: nil)
            if let ack { acknowledge(job, ack) }
        } else {
            handOver(job)
            if let ack { acknowledge(job, ack) }
        }
    }

    private func action(named name: String) -> (any JobAction)? {
        if let last = lastAction, last.name == name { return last.action }
        guard let action = actions[name] else { return nil }
        lastAction = NamedAction(name: name, action: action)
        return action
    }

    /// Checks and records a job; a durable one is appended to the journal.
    @discardableResult
    func accept(_ s: consuming SubmitRequest, submitter: JobSubmitter, jobID: String?, submittedAt: Int64,
                reply: ReplyAddress? = nil, retryOf: String? = nil) throws(ProtocolError) -> Job {
        let owner = submitter.owner
        guard isAccepting else { throw ProtocolError(.shuttingDown, "loopd is stopping and accepts no new jobs") }
        guard let action = action(named: s.action) else { throw ProtocolError(.unknownAction, "no action named \"\(s.action)\"") }
        guard DaemonConfig.permits(action: s.action, under: config.actions, uid: owner.uid, gid: owner.gid,
                                   supplementaryGroups: owner.groups, daemonUID: daemonUID) else {
            throw ProtocolError(.forbidden, "uid \(owner.uid) may not run action \"\(s.action)\"")
        }
        try action.validate(args: s.args)
        if jobID == nil { try applySchedulingLimits(to: &s) }  // a replay keeps what was journaled
        if jobID == nil { try checkRetryLimits(s) }
        let modes = Job.loopModes(s.mode)
        let queue = try place(s.placement, modes: modes)
        if queue.worker.placement == .explicit {
            try checkExplicitWorker(queue.worker.name, owner: owner)
        }
        guard queue.outstanding < config.limits.maxQueuedJobsPerWorker else {
            throw ProtocolError(.queueFull, "worker \(queue.worker.name) has \(queue.outstanding) jobs queued, the limit")
        }
        if s.durable && journalStore == nil {
            throw ProtocolError(.journalUnavailable, "the journal is not open")
        }
        let argBytes = Job.argumentBytes(s.args)
        // A replayed job was accepted before: it counts, and is never refused.
        if jobID == nil { try checkJobQuotas(uid: owner.uid, argBytes: argBytes, durable: s.durable) }
        // A new id must not be one an earlier run's job still answers to.
        let (sequence, id) = jobIDs.next(keeping: jobID) { made in
            (table.hasOtherIDs && table.hasOtherID(made)) || journal?.hasFinished(id: made) == true
        }
        let kind = queue.kind(of: s.action, action, in: metrics)
        kind.metrics.accepted.increment()
        let origin: JobOrigin = reply.map { .waiting(WaitingSubmit(submitter: submitter, address: $0)) } ?? .submitted(submitter)
        let job = Job(id: id, sequence: sequence, request: s, kind: kind, origin: origin,
                      acceptedAt: monotonicNanoseconds(), submittedAtUnixMs: submittedAt)
        if let retryOf { job.retryOf = retryOf }
        schedule(job)
        table.insert(job, generatedID: jobID == nil)
        if JobIndex.Filed(job.state, of: job) == .waiting { queue.countWaiting(job, 1) }
        if let key = s.uniqueKey { registerUniqueKey(key, owner: owner.uid, jobID: id) }
        queue.outstanding += 1
        outstandingJobs += 1
        ledger.change(owner.uid) {
            $0.jobs += 1
            $0.argBytes += argBytes
        }
        // A replayed job is its journal's already; a fleet attempt comes with its fleet id.
        if jobID == nil || s.fleet == true, let store = store(of: job) { store.keep(job) }
        return job
    }

    /// The worker a job goes to. `worker` names one (any placement
    /// setting); `any` picks the least loaded automatic worker whose mode
    /// runs the job now, else the least loaded automatic worker (where it
    /// is held); `key` hashes over the automatic workers, so a key keeps
    /// its worker across restarts while that list is unchanged.
    func place(_ placement: Placement, modes: [Loop.Mode]?) throws(ProtocolError) -> WorkerQueue {
        switch placement {
        case .worker(let name):
            guard let q = queuesByName[name] else { throw ProtocolError(.unknownWorker, "no worker named \"\(name)\"") }
            return q
        case .any:
            let candidates = automatic
            var runsNow = -1, runsNowLoad = Int.max
            var leastLoaded = 0, leastLoad = Int.max
            for i in candidates.indices {
                let load = candidates[i].outstanding
                if load < leastLoad { (leastLoaded, leastLoad) = (i, load) }
                if load < runsNowLoad && candidates[i].worker.admits(modes) { (runsNow, runsNowLoad) = (i, load) }
            }
            return candidates[runsNow >= 0 ? runsNow : leastLoaded]
        case .key(let key):
            return automatic[Int(fnv1a(key) % UInt64(automatic.count))]
        }
    }

    /// Refuses a job on an explicit worker from a peer its allow lists and
    /// the administrators' leave out (`DaemonConfig.permits(worker:…)`).
    private func checkExplicitWorker(_ name: String, owner: JobOwner) throws(ProtocolError) {
        guard !config.permits(worker: name, uid: owner.uid, gid: owner.gid, supplementaryGroups: owner.groups,
                              daemonUID: daemonUID) else { return }
        throw ProtocolError(.forbidden, "uid \(owner.uid) may not place jobs on worker \"\(name)\": an explicit worker "
            + "takes jobs only from administrators and from its allow_users and allow_groups")
    }

    /// Holds a job until the next journal commit.
    private func hold(_ job: Job, ack: ReplyAddress?) {
        guard let journalStore else { preconditionFailure("only a daemon with a journal holds jobs for a commit") }
        move(job, to: .awaitingCommit)
        job.queue.heldForCommit += 1
        journalStore.hold(job, ack: ack)
    }

    /// Hands a job to its worker's lane, or, with a delay (`delay_ms`, or
    /// a retry's backoff), to the delay heap, which hands it over when
    /// the delay has passed on the main loop's clock.
    func handOver(_ job: Job) {
        let delayMs = job.handOverDelayMs
        guard delayMs > 0 else {
            move(job, to: .queued)
            job.queue.handOver(job)
            return
        }
        move(job, to: .delayed)
        timing.delay(job, byMs: delayMs)
    }

    /// Answers a submit that did not wait: the job's id and state.
    func acknowledge(_ job: Job, _ ack: ReplyAddress) {
        ack.sink.send { JobReply.write(current: job, requestID: ack.requestID, into: &$0) }
    }

    /// The `.beforeWaiting` commit: releases the jobs it covered, in
    /// arrival order; if it failed, the durable ones among them fail
    /// (`journal_unavailable`) and never run.
    func commitJournal() {
        guard let (released, failure) = journalStore?.commit() else { return }
        for q in queues { q.heldForCommit = 0 }
        for entry in released {
            let job = entry.job
            guard job.state == .awaitingCommit else {
                // Cancelled while it waited: its acknowledgement says so.
                if let ack = entry.ack { acknowledge(job, ack) }
                continue
            }
            if let failure, job.durable {
                let error = ProtocolError(.journalUnavailable, "the job could not be made durable: \(failure)")
                if let ack = entry.ack { ack.sink.send { Response.error(id: ack.requestID, error, into: &$0) } }
                // A retry's submit record is durable already: its end is journaled.
                end(job, .failure(error, result: .object([])), stored: job.attempt > 1)
                continue
            }
            handOver(job)
            if let ack = entry.ack { acknowledge(job, ack) }
        }
    }
}

// The rest of a job's life: its ends, retries and place in the schedule.
// These change the core's state (the table, the counts, the key order),
// which only this file may set.
extension JobScheduler {
    /// Takes what the lanes reported, in the order they reported it. Runs
    /// when the mailbox says (a take it queued, its lag timer), before a
    /// connection's requests are read, and before a timer of the main loop
    /// judges a job by its state (a schedule's overlap, a wait's timeout,
    /// the STATUS= line): a lane
    /// writes a waiting client's reply right after posting the job's end,
    /// so a request the client sends after that reply (`status`, `stats`)
    /// must find the end recorded even when the end's report was lazy or
    /// its block has not run.
    func recordReports() {
        // The spare list, taken (a nested call finds it empty) and handed back emptied.
        var reports: [LaneReport] = []
        swap(&reports, &spareReports)
        defer {
            reports.removeAllKeepingCapacity()
            swap(&reports, &spareReports)
        }
        guard mailbox.takeAll(swappingWith: &reports) else { return }
        // The job-end lines of the take are written together as it ends,
        // before any reply it queues is flushed: no block is queued for them.
        let outerTake = takingReports
        takingReports = true
        defer {
            takingReports = outerTake
            if !outerTake { log.flushHeld() }
        }
        for report in reports {
            switch report {
            case .started(let job):
                move(job, to: .running)
            case .ended(let ends, let repliesWrittenByLane):
                for e in ends {
                    if e.job.willRetry(after: e.outcome) {
                        retry(e.job, after: e.outcome)
                        continue
                    }
                    if e.job.reply != nil { stats.recordReply(byWorker: repliesWrittenByLane) }
                    end(e.job, e.outcome, usage: e.usage, answeredByLane: true)
                }
            case .flush(let sinks):
                for sink in sinks { sink.endpoint?.replyQueued(unsent: sink.unsentBytes) }
            }
        }
    }

    /// Records a job's end: counts and logs it, tells its store (unless
    /// `stored` is false: a durable job whose submit never reached the
    /// journal), answers whoever waits for it (a waited submit unless its
    /// lane did: `answeredByLane`), and retains it for `status`.
    func end(_ job: Job, _ outcome: ActionOutcome, usage: JobUsage? = nil, stored: Bool = true,
             answeredByLane: Bool = false) {
        let end = Job.End(outcome)
        if job.endedAtUnixMs == 0 { job.endedAtUnixMs = unixMilliseconds() }
        job.usage = usage
        if let usage { job.metrics.used(usage) }
        switch outcome {
        case .success(let result):
            job.result = result
        case .failure(let e, let result):
            job.result = result
            job.error = e
            if job.retries > 0 { recordLastAttempt(job, e) }
        }
        move(job, to: .ended(end))
        unschedule(job)
        stats.record(end)
        let queue = job.queue
        queue.outstanding -= 1
        outstandingJobs -= 1
        let argBytes = Job.argumentBytes(job.args)
        ledger.change(job.clientUID) {
            $0.jobs -= 1
            $0.argBytes -= argBytes
        }
        if end != .cancelled { queue.finished += 1 }
        let micros = (monotonicNanoseconds() &- job.acceptedAt) / 1000
        stats.recordLatency(microseconds: micros)
        job.metrics.ended(end.protocolState)
        if stored, let store = store(of: job) { store.keepEnd(of: job, end) }
        log.jobEnded(JobEndRecord(jobID: job.id, worker: job.worker.name, action: job.actionName, durationUsec: micros,
                                  state: end.protocolState, error: job.error, clientUID: job.clientUID,
                                  priority: job.priority == SubmitRequest.defaultPriority ? nil : job.priority,
                                  attempt: job.retries > 0 ? job.attempt : nil, usage: usage),
                     flushArranged: takingReports)
        if let reply = job.reply, !answeredByLane {
            stats.recordReply(byWorker: false)
            reply.sink.settle { JobReply.write(job, endedWith: outcome, usage: usage, requestID: reply.requestID, into: &$0) }
        }
        for waiter in waiters.takeAll(of: job.id) {
            waiter.sink.settle { out in
                switch waiter.kind {
                case .wait:
                    JobReply.write(job, endedWith: outcome, usage: usage, requestID: waiter.requestID, into: &out)
                case .cancel:
                    Self.writeCancelReply(job, cancelled: end == .cancelled, requestID: waiter.requestID, into: &out)
                case .duplicate:
                    JobReply.write(job, endedWith: outcome, usage: usage, requestID: waiter.requestID, duplicate: true,
                                   into: &out)
                }
            }
        }
        for forgotten in table.retain(job, failed: end.isFailure, nowMs: job.endedAtUnixMs) {
            move(forgotten, to: .forgotten)
            forgetUniqueKey(of: forgotten)
        }
        idleTrim.jobEnded(idle: outstandingJobs == 0)
        laneFreed?(queue)
    }

    /// An attempt of `job` failed with `outcome` and `willRetry` said
    /// another follows: records the attempt (journald, and the journal for
    /// a durable job, whose next attempt waits for that commit), then
    /// queues the job again after its backoff. A job whose cancel came
    /// while the attempt ran ends `cancelled` instead; while the daemon
    /// stops, a durable job stays pending (the next start runs its next
    /// attempt) and any other ends with this attempt's outcome.
    func retry(_ job: Job, after outcome: ActionOutcome) {
        guard case .failure(let error, _) = outcome else { return }
        let attempt = job.attempt
        if job.endedAtUnixMs == 0 { job.endedAtUnixMs = unixMilliseconds() }
        AttemptRecord.append(AttemptRecord(attempt: attempt, code: error.code.rawValue, message: error.message,
                                           endedAt: job.endedAtUnixMs), to: &job.retry.errors)
        if let uid = job.cancelRequestedBy {
            job.endedAtUnixMs = 0
            end(job, .failure(ProtocolError(.cancelled, "job \(job.id) was cancelled by uid \(uid) after attempt \(attempt)"),
                              result: .object([])))
            return
        }
        guard isAccepting || job.durable else {
            end(job, outcome)
            return
        }
        let delay = timing.backoff(afterAttempt: attempt, baseMs: job.retryBackoffMs)
        let micros = (monotonicNanoseconds() &- job.acceptedAt) / 1000
        log.jobEnded(JobEndRecord(jobID: job.id, worker: job.worker.name, action: job.actionName, durationUsec: micros,
                                  state: Job.End(outcome).protocolState, error: error, clientUID: job.clientUID,
                                  attempt: attempt, retryInMs: delay),
                     flushArranged: takingReports)
        stats.retries += 1
        job.attempt = attempt + 1
        job.retry.delayMs = delay
        job.startedAtUnixMs = 0
        job.endedAtUnixMs = 0
        job.claim.reopen()
        if job.durable, let journalStore {
            journalStore.keep(job)
            guard isAccepting else { return }
            move(job, to: .awaitingCommit)
            journalStore.hold(job, ack: nil)
        } else {
            handOver(job)
        }
    }

    /// A new job's place in the schedule: the priority it runs at, and its
    /// expiry, if it has one. Called once by `accept`.
    func schedule(_ job: Job) {
        job.runPriority = keyOrder.runPriority(of: job)
        timing.watchExpiry(of: job)
    }

    /// A job's end, as the schedule sees it: it leaves the delay and expiry
    /// heaps and its key's order.
    func unschedule(_ job: Job) {
        timing.forget(job)
        if case .key = job.placement { keyOrder.ended(job) }
    }

    /// Forgets an ended job now (`discard`): out of the table, its unique key with it.
    func forget(_ job: Job) {
        table.discard(job)
        move(job, to: .forgotten)
        forgetUniqueKey(of: job)
    }

    /// Replay at start: room for `count` ids an earlier run gave out, then
    /// sealed once they are in (`JobTable.reserve(otherIDs:)`).
    func reserveReplayedIDs(_ count: Int) { table.reserve(otherIDs: count) }

    func sealReplayedIDs() { table.sealOtherIDs() }
}

/// What the rest of the daemon asks of the scheduler: reloads, connections
/// coming and going, and the steps of a stop. The server calls these; it
/// sets none of the scheduler's state itself. Main thread only.
extension JobScheduler {
    /// A reload: the actions and limits in force from now on. Jobs already
    /// accepted keep what they were accepted with.
    func reconfigure(_ fresh: DaemonConfig, actions table: [String: any JobAction]) {
        config = fresh
        actions = table
        self.table.retainedByteLimit = fresh.limits.maxRetainedBytes
        self.table.keepFailures(fresh.limits)
        journal?.retainedByteLimit = fresh.limits.maxRetainedBytes
        timing.maxBackoffMs = fresh.limits.maxRetryBackoffMs
    }

    /// A client connected as `uid` (counted for `[quotas]`).
    func connectionOpened(uid: UInt32) {
        ledger.change(uid) { $0.connections += 1 }
        metrics.connectionAccepted()
    }

    /// A client's connection closed: its waits end with it.
    func connectionClosed(_ sink: ReplySink, uid: UInt32) {
        ledger.change(uid) { $0.connections -= 1 }
        waiters.dropAll(of: sink)
    }

    /// The first step of a stop: submits are refused from now on, and no
    /// fleet job is claimed.
    func stopAccepting() {
        isAccepting = false
    }

    /// The grace has passed: every worker stops the job it runs.
    func stopRunningJobs() {
        for queue in queues { queue.shutDownRunning() }
    }

    /// The workers have stopped: nothing is left to trim memory after.
    func workersStopped() {
        idleTrim.stop()
    }

    /// The last step of a stop, once the workers' last reports are queued
    /// on this loop: records them and commits the journal, so a clean stop
    /// leaves nothing finished to replay.
    func settle() {
        recordReports()
        commitJournal()
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

/// An action and its name, held as one reference (`JobScheduler.lastAction`):
/// a copy of it is a retain, where an optional existential is copied through
/// the runtime's generic witnesses.
private final class NamedAction {
    let name: String
    let action: any JobAction

    init(name: String, action: any JobAction) {
        self.name = name
        self.action = action
    }
}
