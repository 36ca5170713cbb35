import LoopRuntime
import LoopdProtocol

/// How a job ended, as its action reports it.
public enum ActionOutcome: Sendable, Equatable {
    /// It succeeded with this result object.
    case success(JSON)
    /// It failed; `result` carries what it produced before failing.
    case failure(ProtocolError, result: JSON)
}

/// An action a job can name. Embedders register their own with
/// `Daemon.register(action:named:)`.
///
/// `start` runs on the worker's thread and must not block it: an action
/// that waits (for a child, a delay, I/O) adds sources or timers to
/// `context.loop` and calls `context.complete` when done. The worker runs
/// its next job only after `complete`.
public protocol JobAction: Sendable {
    /// Checks the client's arguments before the job is accepted; throw a
    /// `bad_request` to refuse them.
    func validate(args: [String]) throws(ProtocolError)
    /// Starts the job.
    func start(_ context: ActionContext)
    /// The timeout applied when the job names none; nil: no timeout.
    var defaultTimeoutMs: Int64? { get }
}

extension JobAction {
    public func validate(args: [String]) throws(ProtocolError) {}
    public var defaultTimeoutMs: Int64? { nil }
}

/// One running job, as its action sees it. Worker thread only: its
/// fields are marked `@exclusivity(unchecked)` for that reason (see
/// ARCHITECTURE.md, "Threads").
public final class ActionContext: @unchecked Sendable {
    /// The job's id.
    public let jobID: String
    /// The client's arguments.
    public let args: [String]
    /// The worker's loop: add sources and timers here.
    public let loop: Loop
    /// The worker's name.
    public let workerName: String
    /// Called when the job's timeout passes. An action that can stop its
    /// work early sets it and later completes with `stopReason` (a `timeout`
    /// failure); without it, the job ends with `timeout` at once.
    @exclusivity(unchecked) public var onTimeout: (() -> Void)?
    /// Called when a client cancels the job while it runs. An action that
    /// can stop its work early sets it and later completes with
    /// `stopReason` (a `cancelled` failure); without it, the job ends
    /// `cancelled` at once (what the action does afterwards is ignored).
    @exclusivity(unchecked) public var onCancel: (() -> Void)?
    /// Called when loopd stops while the job still runs at the end of the
    /// shutdown grace (`server.shutdown_grace_ms`). An action that started
    /// processes sets it and stops them now; the job is not ended (a
    /// durable one runs again after the restart), so the action must not
    /// call `complete` afterwards.
    @exclusivity(unchecked) public var onShutdown: (() -> Void)?
    /// What the job's processes used, set by the action before `complete`
    /// when it knows (exec actions do).
    @exclusivity(unchecked) public var usage: JobUsage?
    /// Why the job is being stopped early, once a timeout or a cancel asked
    /// for it: the error its action should complete with.
    @exclusivity(unchecked) public private(set) var stopReason: ProtocolError?
    /// The job, and the lane running it, which `complete` tells (unowned:
    /// a lane outlives its jobs).
    private unowned let lane: JobLane
    private let job: Job
    /// Whether `complete` was called.
    @exclusivity(unchecked) public private(set) var isComplete = false

    init(job: Job, lane: JobLane, loop: Loop, workerName: String) {
        jobID = job.id
        args = job.args
        self.job = job
        self.lane = lane
        self.loop = loop
        self.workerName = workerName
    }

    /// Ends the job. Later calls are ignored (a late completion after a
    /// timeout, say).
    public func complete(_ outcome: ActionOutcome) {
        guard !isComplete else { return }
        isComplete = true
        onTimeout = nil
        onCancel = nil
        onShutdown = nil
        lane.finished(job, outcome, usage)
    }

    /// Asks the action to stop early because of `reason` (a timeout or a
    /// cancel), through its `hook`; without one, ends the job with `reason`.
    /// The first reason wins: a cancel after a timeout changes nothing.
    func stop(_ reason: ProtocolError, hook: KeyPath<ActionContext, (() -> Void)?>) {
        guard !isComplete, stopReason == nil else { return }
        stopReason = reason
        if let stop = self[keyPath: hook] {
            stop()
        } else {
            complete(.failure(reason, result: .object([])))
        }
    }

    /// A client's `cancel` of the running job.
    func cancel(_ reason: ProtocolError) {
        stop(reason, hook: \.onCancel)
    }

    /// loopd stops with the job still running: its action's shutdown hook,
    /// if any. The job stays unended either way.
    func shutDown() {
        guard !isComplete, let hook = onShutdown else { return }
        onShutdown = nil
        hook()
    }
}
