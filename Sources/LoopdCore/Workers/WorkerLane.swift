import LoopRuntime
import LoopdProtocol

/// The worker thread's side of a worker: the serial lane. Jobs arrive in
/// order; one runs at a time; a job whose mode the loop is not running now
/// (it arrived, then the mode changed) waits for that mode while later jobs
/// of the running mode proceed. Worker thread only, except `installObserver`
/// which runs there too.
final class WorkerLane: @unchecked Sendable {
    let name: String
    let loop: Loop
    private let report: @Sendable ([(Job, ActionOutcome)]) -> Void
    /// Ends reported together once the current batch of work is done.
    private var finishedBatch: [(Job, ActionOutcome)] = []
    private var ready = ReadyQueue<Job>()
    private var running: (job: Job, context: ActionContext, timeout: LoopTimer?)?
    private var pumping = false
    private var observer: LoopObserver?
    /// Shared with the main side, for `workers`.
    private let runningJob: RunningJobSlot

    init(name: String, loop: Loop, runningJob: RunningJobSlot, report: @escaping @Sendable ([(Job, ActionOutcome)]) -> Void) {
        self.name = name
        self.loop = loop
        self.runningJob = runningJob
        self.report = report
    }

    /// Re-examines the lane whenever a run starts: a mode change may admit a waiting job.
    func installObserver() {
        let o = LoopObserver(activities: .entry, repeats: true, order: 0) { [unowned self] _, _ in pump() }
        observer = o
        loop.add(o, forMode: .common)
    }

    /// Jobs handed over by the main thread (their block ran in an admitting mode).
    func arrive(_ jobs: [Job]) {
        ready.append(contentsOf: jobs)
        pump()
    }

    private func admits(_ job: Job, _ mode: Loop.Mode?) -> Bool {
        guard let modes = job.modes else { return true }
        guard let mode else { return false }
        return modes.contains(mode)
    }

    /// Starts ready jobs one after another until one is still running or
    /// none is admitted. Iterative, so a run of jobs that finish at once
    /// does not nest calls.
    private func pump() {
        guard !pumping else { return }
        pumping = true
        defer { pumping = false }
        while running == nil {
            let mode = loop.currentMode
            guard let job = ready.takeFirst(where: { admits($0, mode) }) else { return }
            guard job.transition(from: .pending, to: .running) else { continue }  // cancelled meanwhile
            start(job)
        }
    }

    private func start(_ job: Job) {
        runningJob.jobID = job.id
        let context = ActionContext(jobID: job.id, args: job.request.args, loop: loop, workerName: name) { [unowned self] outcome in
            finished(job, outcome)
        }
        var timeoutTimer: LoopTimer?
        if let ms = job.request.timeoutMs ?? job.action.defaultTimeoutMs {
            let t = LoopTimer(after: .milliseconds(ms)) { _ in
                if let onTimeout = context.onTimeout {
                    onTimeout()
                } else {
                    context.complete(.failure(ProtocolError(.timeout, "job ran past its \(ms) ms timeout"), result: .object([])))
                }
            }
            loop.add(t, forMode: .common)
            timeoutTimer = t
        }
        running = (job, context, timeoutTimer)
        job.action.start(context)
    }

    private func finished(_ job: Job, _ outcome: ActionOutcome) {
        guard let current = running, current.job === job else { return }
        current.timeout?.invalidate()
        running = nil
        _ = job.transition(from: .running, to: .finished)
        runningJob.jobID = nil
        if finishedBatch.isEmpty {
            // Report after the jobs this pass can run, in one hand-off.
            loop.perform(inModes: [.common]) { [unowned self] in
                let done = finishedBatch
                finishedBatch = []
                report(done)
            }
        }
        finishedBatch.append((job, outcome))
        pump()
    }
}
