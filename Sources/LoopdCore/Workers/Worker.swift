import LoopRuntime
import Synchronization

/// A worker: a resident `LoopThread` with a name, the run mode it runs in,
/// and whether automatic placement may choose it. It knows nothing of jobs:
/// the job pipeline hands it blocks in the modes they need, so a block for a
/// mode the worker is not running waits in its loop's queue (R5, R24).
final class Worker: @unchecked Sendable {
    // MARK: immutable, any thread
    let name: String
    let thread: LoopThread
    /// Whether `any` and `key` placement may choose it (config `placement`).
    let placement: DaemonConfig.Worker.Placement
    /// The job running now; written by the worker's thread, read by the
    /// main thread (`workers`, the watchdog, shutdown).
    let runningJob = RunningJobSlot()

    // MARK: main thread only
    /// The mode the worker runs, or is switching to: what placement judges
    /// a job by. Set when a switch is asked for, so a job submitted after
    /// the `mode` request is placed by the new mode.
    private(set) var runMode: Loop.Mode

    /// The loop mode for a configured mode name ("default" is the loop's default mode).
    static func loopMode(_ name: String) -> Loop.Mode {
        name == "default" ? .default : Loop.Mode(name)
    }

    /// The configured name of a loop mode.
    static func modeName(_ mode: Loop.Mode) -> String {
        mode == .default ? "default" : mode.rawValue
    }

    init(_ config: DaemonConfig.Worker) {
        name = config.name
        placement = config.placement
        let loopMode = Worker.loopMode(config.mode)
        runMode = loopMode
        thread = LoopThread(name: "loopd-\(config.name)", mode: loopMode)
        // Every mode the worker runs is one of its loop's common modes, so
        // "common" jobs and internal blocks run whatever the mode.
        thread.loop.addCommonMode(loopMode)
    }

    /// The loop every job of this worker runs on.
    var loop: Loop { thread.loop }

    /// The name of the mode the worker runs (or is switching to).
    var mode: String { Worker.modeName(runMode) }

    /// Whether a job for `modes` (nil: every mode) runs in the worker's mode now.
    func admits(_ modes: [Loop.Mode]?) -> Bool {
        guard let modes else { return true }
        return modes.contains(runMode)
    }

    /// Switches the worker's run mode; held work of the new mode proceeds.
    /// `switched` runs on the worker's thread once no job of the old mode
    /// can start any more. Main thread.
    func setMode(_ name: String, switched: @escaping @Sendable () -> Void) {
        let m = Worker.loopMode(name)
        runMode = m
        thread.loop.addCommonMode(m)
        thread.setRunMode(m, switched: switched)
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

/// What a worker runs now, as `workers` reports it: the job's id (shown
/// only to who may see the job), its action, whose it is and since when.
struct RunningJob: Sendable, Equatable {
    let jobID: String
    let action: String
    /// The uid that submitted it.
    let ownerUID: UInt32
    /// When the worker started it, Unix milliseconds.
    let startedAtUnixMs: Int64
}

/// The job a worker is running, shared between its thread (which writes
/// it) and the main thread (which reports it).
final class RunningJobSlot: Sendable {
    private let value = Mutex<RunningJob?>(nil)

    /// The job running now, nil while the worker runs none.
    var current: RunningJob? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }

    /// The id of the job running now.
    var jobID: String? { current?.jobID }
}
