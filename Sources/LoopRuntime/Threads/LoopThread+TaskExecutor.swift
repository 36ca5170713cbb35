import LoopPlatform

/// A `LoopThread` is a task executor as well as a serial executor: a task
/// that prefers it runs its nonisolated code on the thread.
///
/// ```swift
/// let worker = LoopThread(name: "w1")
/// Task(executorPreference: worker) {
///     // on w1, as a block of its loop's common modes
///     await withTaskExecutorPreference(worker) { /* still on w1 */ }
/// }
/// ```
///
/// Each job is queued with `Loop.perform(inModes: nil)`, exactly as
/// `perform` without modes queues a block: it runs in the next pass of a
/// run in one of the loop's common modes (the default mode among them), as
/// one of that pass's blocks (R17, steps 4 and 10), in order with every
/// other request (R23), between the timers and sources the loop handles.
/// While the thread runs a mode outside the common set, jobs wait (R24).
///
/// The thread plays both roles with one identity, the pattern SE-0417 gives
/// for such executors: every job runs isolated to the thread as a serial
/// executor and on it as a task executor, so an actor pinned to the thread
/// (`unownedExecutor` = `asUnownedSerialExecutor()`) is entered without a
/// hop from a task that prefers the thread, and nested
/// `withTaskExecutorPreference(thread)` stays on it. A task's job queued
/// after `stop()` never runs and the task never resumes, as with any block
/// of a loop whose thread has gone: stop a thread once the tasks that
/// prefer it are done.
extension LoopThread: TaskExecutor {
    /// The thread as the runtime's task executor reference.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}

/// A task executor that runs jobs on a `Loop`'s thread, as blocks of the
/// loop's runs (`Loop.perform(inModes:)`), for loops that are not a
/// `LoopThread`'s, above all `Loop.main`:
///
/// ```swift
/// Task(executorPreference: Loop.main.taskExecutor) {
///     assert(Loop.isMainThread)
/// }
/// Loop.main.run()  // on the main thread: the task's jobs run in this run
/// ```
///
/// A job runs in the next pass of a run in one of `modes` (nil: the
/// loop's common modes, the default mode among them, which is where
/// `perform` without modes runs a block), as one of that pass's blocks
/// (R17, steps 4 and 10), in order with the loop's other blocks. Nothing
/// runs the loop for you: while its thread is not running it in one of
/// `modes`, the jobs wait, kept, not lost (R2, R24), and the tasks stay
/// suspended. For `Loop.main` that means the main thread has to run
/// `Loop.main` (`run()`, or `run(mode:timeout:)` in a common mode); a main
/// thread parked in `dispatchMain()` serves the Dispatch main queue and
/// `@MainActor`, not these jobs. Jobs queued for a loop whose thread has
/// exited never run.
///
/// Jobs run with this executor as the current task executor and no serial
/// executor, so a task that prefers it keeps running nonisolated code on the
/// loop without hops, and `withTaskExecutorPreference` with the same
/// executor nested inside stays on the loop. Each instance is one executor
/// to the runtime; `Loop.taskExecutor` hands out the same one for as long
/// as it is in use.
public final class LoopTaskExecutor: TaskExecutor {
    /// The loop whose thread runs the jobs.
    public let loop: Loop
    /// The modes whose runs run the jobs (nil: the loop's common modes).
    public let modes: [Loop.Mode]?

    /// An executor for `loop`'s runs in `modes` (nil: the common modes). Use
    /// `loop.taskExecutor` for the common modes: it shares one instance.
    public init(loop: Loop, modes: [Loop.Mode]? = nil) {
        self.loop = loop
        self.modes = modes
    }

    /// Queues `job` as a block of the loop (R19: wakes it if it sleeps). Any thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // Captures self: the job keeps its executor alive until it has run.
        loop.perform(inModes: modes) { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// This executor as the runtime's task executor reference.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}

extension Loop {
    /// This loop as a task executor for its common modes (see
    /// `LoopTaskExecutor`). The same instance while anything holds it (a
    /// task preferring it, a caller of `withTaskExecutorPreference`), so
    /// nested preferences for the loop do not hop; `Loop.main`'s is kept
    /// for the life of the process. Any thread.
    public var taskExecutor: LoopTaskExecutor { TaskExecutorTable.shared.executor(for: self) }
}

/// The executors `Loop.taskExecutor` handed out, by loop. An entry whose
/// executor is alive keeps its loop alive (the executor holds it), so a key
/// never names a different loop at the same address.
private final class TaskExecutorTable: Sendable {
    static let shared = TaskExecutorTable()

    private final class Entry: @unchecked Sendable {
        weak var executor: LoopTaskExecutor?  // guarded by the table's lock
        init(_ executor: LoopTaskExecutor) { self.executor = executor }
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// `Loop.main`'s, held for good.
        var main: LoopTaskExecutor?
    }

    private let state = Locked(State())

    func executor(for loop: Loop) -> LoopTaskExecutor {
        state.withLock { state in
            if loop.isMain {
                if let main = state.main { return main }
                let made = LoopTaskExecutor(loop: loop)
                state.main = made
                return made
            }
            let key = ObjectIdentifier(loop)
            if let existing = state.entries[key]?.executor { return existing }
            // Drop entries whose executor went away, then add this loop's.
            state.entries = state.entries.filter { $0.value.executor != nil }
            let made = LoopTaskExecutor(loop: loop)
            state.entries[key] = Entry(made)
            return made
        }
    }
}
