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
    /// The worker's own metrics, and its jobs' by action (made on first use).
    let metrics: WorkerMetrics
    private var jobMetrics: [String: JobMetrics] = [:]
    /// The last action's, asked again first (jobs come in runs of one action).
    private var lastJobMetrics: JobMetrics?
    /// Jobs for this worker waiting for the next journal commit. While a
    /// durable job waits, later jobs for the same worker wait behind it, so
    /// the worker still runs them in arrival order.
    var heldForCommit = 0
    /// Jobs handed over this pass, sent together (one block, one wake-up)
    /// once the pass's requests are read; all share `batchModes`.
    private var batch: [Job] = []
    private var batchModes: [Loop.Mode]? = nil
    private var batchFlushScheduled = false

    init(worker: Worker, mailbox: LaneMailbox, mainLoop: Loop, metrics: DaemonMetrics) {
        self.worker = worker
        self.mainLoop = mainLoop
        self.metrics = metrics.worker(named: worker.name)
        lane = JobLane(worker: worker, mailbox: mailbox, mainLoop: mainLoop)
    }

    /// Hands a job to the worker's lane, after its delay if it has one.
    /// Jobs without a delay are batched: consecutive jobs of the same modes
    /// travel in one block, so order and mode holding are as if each went alone.
    func handOver(_ job: Job) {
        let lane = self.lane
        let modes = job.modes ?? [.common]
        let delayMs = job.handOverDelayMs
        if delayMs > 0 {
            sendBatch()
            job.delayToken = worker.thread.perform(afterDelay: .milliseconds(delayMs), modes: modes) {
                lane.arrive([job])
            }
            return
        }
        if !batch.isEmpty && batchModes != modes { sendBatch() }
        batch.append(job)
        batchModes = modes
        if !batchFlushScheduled {
            batchFlushScheduled = true
            mainLoop.perform(inModes: [.common]) { [self] in
                batchFlushScheduled = false
                sendBatch()
            }
        }
    }

    /// The metrics of `action`'s jobs on this worker.
    func metrics(of action: String, in daemon: DaemonMetrics) -> JobMetrics {
        if let last = lastJobMetrics, last.action == action { return last }
        let m = jobMetrics[action] ?? daemon.jobs(action: action, on: metrics)
        jobMetrics[action] = m
        lastJobMetrics = m
        return m
    }

    /// Asks the lane to stop `job` if it is running.
    func cancelRunning(_ job: Job, by uid: UInt32) {
        let lane = self.lane
        worker.thread.perform(modes: [.common]) { lane.cancelRunning(job, by: uid) }
    }

    /// Sends the pending batch to the worker's loop.
    private func sendBatch() {
        guard !batch.isEmpty else { return }
        let jobs = batch, lane = self.lane
        batch = []
        worker.thread.perform(modes: batchModes) { lane.arrive(jobs) }
    }
}
