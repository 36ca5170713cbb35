import LoopRuntime

/// The main thread's side of one worker's jobs: the lane it hands them to,
/// how many are outstanding, the hand-over being batched, and how many wait
/// behind a journal commit. Main thread only (the block it queues on the
/// main loop runs there).
final class WorkerQueue: @unchecked Sendable {
    let worker: Worker
    let lane: JobLane
    private let mainLoop: Loop
    /// Jobs accepted for this worker and not ended.
    var outstanding = 0
    /// Jobs it ended other than by a cancel.
    var finished = 0
    /// Its jobs filed as waiting (`JobIndex.Filed.waiting`: queued or held,
    /// not delayed), in all and by the mode they need, so `workers` and the
    /// metrics tell the held ones without walking the jobs.
    private(set) var waiting = 0
    private var waitingInEveryMode = 0
    /// Those of the default mode, most jobs, counted without hashing a mode.
    private var waitingInDefaultMode = 0
    @exclusivity(unchecked) private var waitingByMode: [Loop.Mode: Int] = [:]
    /// The worker's own metrics.
    let metrics: WorkerMetrics
    /// Its jobs' kinds by action name (made on first use), and their
    /// metrics, which outlive a reload.
    @exclusivity(unchecked) private var kinds: [String: JobKind] = [:]
    private var jobMetrics: [String: JobMetrics] = [:]
    /// The last kind, asked again first (jobs come in runs of one action).
    @exclusivity(unchecked) private var lastKind: JobKind?
    /// Gives each kind its slot in the `jobs` index.
    private let kindSlots: KindSlots
    /// Jobs for this worker waiting for the next journal commit. While a
    /// durable job waits, later jobs for the same worker wait behind it, so
    /// the worker still runs them in arrival order.
    var heldForCommit = 0
    /// Jobs handed over this pass, sent together (one block, one wake-up)
    /// once the pass's requests are read.
    @exclusivity(unchecked) private var batch: [Job] = []
    private var batchFlushScheduled = false
    /// The block that sends the batch, made once (not a closure per pass).
    /// Unowned, as the server's flush: the scheduler that owns the queue
    /// outlives the main loop's passes. A weak reference would cost each
    /// send a checked access and a weak load, and every retain of the
    /// queue (several a job) the runtime's slow path.
    private lazy var sendBlock: @Sendable () -> Void = { [unowned self] in
        batchFlushScheduled = false
        sendBatch()
    }

    init(worker: Worker, mailbox: LaneMailbox, mainLoop: Loop, metrics: DaemonMetrics, kindSlots: KindSlots) {
        self.worker = worker
        self.kindSlots = kindSlots
        self.mainLoop = mainLoop
        self.metrics = metrics.worker(named: worker.name)
        lane = JobLane(worker: worker, mailbox: mailbox, mainLoop: mainLoop)
    }

    /// Counts `job` in (`delta` 1) or out (-1) of the waiting jobs.
    func countWaiting(_ job: Job, _ delta: Int) {
        waiting += delta
        // A job without extras runs in the default mode alone.
        guard let extras = job.extras else {
            waitingInDefaultMode += delta
            return
        }
        guard let modes = extras.modes else {
            waitingInEveryMode += delta
            return
        }
        for m in modes {
            if m == .default { waitingInDefaultMode += delta } else { waitingByMode[m, default: 0] += delta }
        }
    }

    /// Waiting jobs the worker's mode does not admit now: what `workers`
    /// and the metrics call held. O(1): the waiting jobs less those that
    /// run in every mode and those of the mode it runs.
    var held: Int {
        let mode = worker.runMode
        return waiting - waitingInEveryMode - (mode == .default ? waitingInDefaultMode : waitingByMode[mode] ?? 0)
    }

    /// Hands a job to the worker's lane, batched with the pass's others.
    /// The block runs in whatever mode the worker runs: a job of another
    /// mode waits in the lane, where priority orders it among the others
    /// (a block of its own mode would wait in the loop instead, and start
    /// before a better job handed over after it).
    func handOver(_ job: Job) {
        batch.append(job)
        if !batchFlushScheduled {
            batchFlushScheduled = true
            mainLoop.perform(sendBlock)
        }
    }

    /// The kind of the jobs of `action` (named `name`) on this worker.
    func kind(of name: String, _ action: any JobAction, in daemon: DaemonMetrics) -> JobKind {
        if let last = lastKind, last.actionName == name { return last }
        if let known = kinds[name] {
            lastKind = known
            return known
        }
        let m = jobMetrics[name] ?? daemon.jobs(action: name, on: metrics)
        jobMetrics[name] = m
        let k = JobKind(action: action, named: name, queue: self, metrics: m, indexSlot: kindSlots.next())
        kinds[name] = k
        lastKind = k
        return k
    }

    /// Drops the kinds: the actions they hold were replaced (a reload).
    func forgetKinds() {
        kinds = [:]
        lastKind = nil
    }

    /// Asks the lane to stop `job` if it is running.
    func cancelRunning(_ job: Job, by uid: UInt32) {
        let lane = self.lane
        worker.thread.perform(modes: [.common]) { lane.cancelRunning(job, by: uid) }
    }

    /// loopd is stopping and the shutdown grace has passed: asks the lane
    /// to stop the processes of its running job (which stays unended).
    func shutDownRunning() {
        let lane = self.lane
        worker.thread.perform(modes: [.common]) { lane.shutDownRunning() }
    }

    /// Sends the pending batch to the worker's loop.
    private func sendBatch() {
        guard !batch.isEmpty else { return }
        if batch.count == 1 {
            // Most batches (a sequential client's): the job alone travels,
            // and the batch keeps its buffer (`removeLast` keeps it too, for
            // less than `removeAll(keepingCapacity:)`). The block captures
            // the job alone and reaches the lane through it: a closure over
            // one object needs no context of its own, one over two has one
            // allocated per job.
            let job = batch.removeLast()
            worker.thread.perform { job.queue.lane.arrive(job) }
            return
        }
        let lane = self.lane
        let jobs = batch
        batch = []
        worker.thread.perform { lane.arrive(jobs) }
    }
}

/// Hands out the slots of the `jobs` index's per-kind sets, one per
/// `JobKind` ever made (a reload makes new kinds; the old ones' sets empty
/// as their jobs are forgotten). Main thread only.
final class KindSlots {
    private var count = 0

    func next() -> Int {
        defer { count += 1 }
        return count
    }
}
