import LoopRuntime
import LoopdProtocol
import Synchronization

/// A worker: a resident `LoopThread` running jobs one at a time in arrival
/// order. The main thread hands jobs over as blocks in the job's modes, so a
/// job for a mode the worker is not running waits in the loop's queue (R5,
/// R24) until the worker runs that mode.
final class Worker: @unchecked Sendable {
    let name: String
    let thread: LoopThread
    let lane: WorkerLane

    // MARK: main thread only
    /// Jobs accepted for this worker and not finished.
    var outstanding = 0
    /// Jobs it completed or failed.
    var finished = 0
    /// Jobs accepted this pass, handed over together (one block, one wake-up)
    /// once the pass's requests are read; all share `batchModes`.
    private var batch: [Job] = []
    private var batchModes: [Loop.Mode]? = nil
    private var batchFlushScheduled = false
    private let mainLoop: Loop
    /// Jobs for this worker held in `Server.awaitingCommit` until the next
    /// journal commit. While a durable job waits there, later jobs for the
    /// same worker wait behind it, so the worker still runs them in arrival
    /// order (bug: durable-reorder).
    var heldForCommit = 0

    /// The id of the job running now; written by the worker, read by `workers`.
    let runningJob = RunningJobSlot()

    /// The loop mode for a configured mode name ("default" is the loop's default mode).
    static func loopMode(_ name: String) -> Loop.Mode {
        name == "default" ? .default : Loop.Mode(name)
    }

    /// The configured name of a loop mode.
    static func modeName(_ mode: Loop.Mode) -> String {
        mode == .default ? "default" : mode.rawValue
    }

    /// `report` hands the main side the ends of a pass's jobs; `wake` then
    /// has the main loop record them and write the replies left to it (the
    /// ids of their connections); `attention` asks it to look at a
    /// connection a reply was written to (see `ReplyChannel.deliver`). All
    /// three are called on the worker's thread.
    init(name: String, mode: String, mainLoop: Loop, report: @escaping @Sendable ([(Job, ActionOutcome)]) -> Void,
         wake: @escaping @Sendable (_ unwritten: [Int]) -> Void,
         attention: @escaping @Sendable (_ connectionID: Int) -> Void) {
        self.name = name
        self.mainLoop = mainLoop
        let loopMode = Worker.loopMode(mode)
        thread = LoopThread(name: "loopd-\(name)", mode: loopMode)
        lane = WorkerLane(name: name, loop: thread.loop, mainLoop: mainLoop, runningJob: runningJob,
                          report: report, wake: wake, attention: attention)
        let lane = self.lane
        let loop = thread.loop
        // Every mode the worker runs is one of its loop's common modes, so
        // "common" jobs and internal blocks run whatever the mode.
        loop.addCommonMode(loopMode)
        thread.perform(waitUntilDone: true, modes: [.common]) {
            lane.installObserver()
        }
    }

    /// The mode the worker's loop runs.
    var mode: String { Worker.modeName(thread.runMode) }

    /// Switches the worker's run mode; held jobs of the new mode proceed.
    /// `switched` runs on the worker's thread once no job of the old mode
    /// can start any more.
    func setMode(_ name: String, switched: @escaping @Sendable () -> Void) {
        let m = Worker.loopMode(name)
        thread.loop.addCommonMode(m)
        thread.setRunMode(m, switched: switched)
    }

    /// Hands a job to the worker (after its delay, if any). Main thread.
    /// Jobs without a delay are batched: consecutive jobs of the same modes
    /// travel in one block, so order and mode holding are as if each went alone.
    func dispatch(_ job: Job) {
        let lane = self.lane
        let modes = job.modes ?? [.common]
        if job.request.delayMs > 0 {
            flushBatch()
            job.delayToken = thread.perform(afterDelay: .milliseconds(job.request.delayMs), modes: modes) {
                lane.arrive([job])
            }
            return
        }
        if !batch.isEmpty && batchModes != modes { flushBatch() }
        batch.append(job)
        batchModes = modes
        if !batchFlushScheduled {
            batchFlushScheduled = true
            mainLoop.perform(inModes: [.common]) { [self] in
                batchFlushScheduled = false
                flushBatch()
            }
        }
    }

    /// Sends the pending batch to the worker's loop. Main thread.
    func flushBatch() {
        guard !batch.isEmpty else { return }
        let jobs = batch, lane = self.lane
        batch = []
        thread.perform(modes: batchModes) { lane.arrive(jobs) }
    }

    /// What `workers` says of the loop: waiting, busy or stalled.
    func loopState(stallThreshold: Duration) -> (String, Duration) {
        let loop = thread.loop
        let stalled = loop.stalledDuration
        if stalled >= stallThreshold { return ("stalled", stalled) }
        return (loop.isWaiting ? "waiting" : "busy", stalled)
    }

    func stop() { thread.stop() }
}

/// The id of the job a worker is running, shared between its thread (which
/// writes it) and the main thread (which reports it).
final class RunningJobSlot: Sendable {
    private let value = Mutex<String?>(nil)
    var jobID: String? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
