/// Why an `async` perform could not run its body.
public enum LoopThreadError: Error, Sendable, Equatable {
    /// The thread was stopped before the request was queued.
    case stopped
}

extension LoopThread {
    /// Runs `body` on the thread's loop in `modes` (nil: the common modes)
    /// and returns its result to the awaiting task.
    public func perform<T: Sendable>(modes: [Loop.Mode]? = nil,
                                     _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let queued = perform(waitUntilDone: false, modes: modes) {
                continuation.resume(with: Result { try body() })
            }
            if !queued { continuation.resume(throwing: LoopThreadError.stopped) }
        }
    }
}

/// A `LoopThread` can be an actor's executor, pinning the actor to one
/// resident thread:
///
/// ```swift
/// actor Pinned {
///     let thread = LoopThread(name: "pinned")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }
/// }
/// ```
/// Jobs run as blocks in the thread loop's common modes, in order with
/// other requests.
extension LoopThread: SerialExecutor {
    /// Queues `job` as a block for the thread loop's common modes, behind
    /// the requests already queued (R23); it runs on the thread while the
    /// loop runs a common mode.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        let taskExecutor = asUnownedTaskExecutor()
        // Both roles, one identity (LoopThread+TaskExecutor.swift).
        loop.perform(inModes: nil) { job.runSynchronously(isolatedTo: executor, taskExecutor: taskExecutor) }
    }

    /// This thread as an actor's executor: return it from an actor's
    /// `unownedExecutor` to run the actor's jobs on the thread.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless called on the thread itself: what
    /// `assumeIsolated` and `preconditionIsolated` of an actor on this
    /// executor rely on.
    public func checkIsolated() {
        precondition(loop.isCurrentThread, "expected to run on LoopThread \(name)")
    }
}
