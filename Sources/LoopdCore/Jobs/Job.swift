import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// One submitted job. What was asked is immutable and shared with the
/// worker that runs it; where the job is in its life (`state`) belongs to
/// the main thread and changes only through `JobScheduler`; `claim` is the
/// one thing both threads change (a cancel and a start can never both win).
final class Job: @unchecked Sendable {
    // MARK: immutable, any thread
    let id: String
    /// Submission order within this run of the daemon: `jobs` pages by it.
    let sequence: UInt64
    let request: SubmitRequest
    let action: any JobAction
    /// The worker it was placed on, with the main thread's view of its queue.
    let queue: WorkerQueue
    /// `queue.worker`, kept here: replies name it on every job.
    let worker: Worker
    /// Who submitted it (SO_PEERCRED / SO_PEERGROUPS, or the journal's
    /// record on a replay): status and cancel are the owner's.
    let owner: JobOwner
    /// The loop modes whose runs may start it (nil: every mode the worker runs).
    let modes: [Loop.Mode]?
    /// Monotonic nanoseconds at acceptance, for the latency summary.
    let acceptedAt: UInt64
    /// Unix milliseconds at submission (kept across a replay).
    let submittedAtUnixMs: Int64
    /// Where the reply of a waited `submit` goes. The worker that runs the
    /// job writes it; if the job never runs, the scheduler does.
    let reply: ReplyAddress?
    /// The metrics it counts in (its action on its worker): its lane
    /// records its wait and run times, the main thread its end.
    let metrics: JobMetrics

    // MARK: any thread
    /// Who got to the waiting job first: its lane, to start it, or a cancel.
    let claim = JobClaim()
    /// The delayed hand-over on the worker, for `cancel` (set on the main
    /// thread before the job can be cancelled, read there only).
    nonisolated(unsafe) var delayToken: PerformToken?

    /// The priority it starts by on its lane (`KeyOrder`): set on the main
    /// thread before the hand-over, read by the lane after it.
    nonisolated(unsafe) var runPriority = SubmitRequest.defaultPriority

    // MARK: written by the lane before it reports the job; read by the main thread after the report
    /// When its worker started it, Unix milliseconds; 0 until then.
    nonisolated(unsafe) var startedAtUnixMs: Int64 = 0
    /// When it ended on its worker, Unix milliseconds; 0 until then.
    nonisolated(unsafe) var endedAtUnixMs: Int64 = 0

    // MARK: written by the main thread before each hand-over; read by the lane after it
    /// Which attempt runs (or ran last), from 1 (see `JobScheduler+Retries`).
    nonisolated(unsafe) var attempt = 1

    // MARK: main thread only
    /// Where it is in its life; only `advance(to:)` changes it.
    private(set) var state = State.accepted
    var result: JSON?
    var error: ProtocolError?
    /// The uid whose `cancel` request is stopping, or stopped, it.
    var cancelRequestedBy: UInt32?
    /// Its place in the scheduler's expiry heap (`JobExpiries`); -1: not there.
    var expirySlot = -1
    /// The failed attempts' errors and the backoff before this attempt.
    var retry = RetryState()

    var clientUID: UInt32 { owner.uid }

    /// `modes` is `Job.loopModes(request.mode)`, worked out once by the caller.
    init(id: String, sequence: UInt64, request: SubmitRequest, modes: [Loop.Mode]?, action: any JobAction,
         queue: WorkerQueue, owner: JobOwner, acceptedAt: UInt64, submittedAtUnixMs: Int64, reply: ReplyAddress?,
         metrics: JobMetrics) {
        self.id = id
        self.sequence = sequence
        self.request = request
        self.action = action
        self.queue = queue
        worker = queue.worker
        self.owner = owner
        self.acceptedAt = acceptedAt
        self.submittedAtUnixMs = submittedAtUnixMs
        self.reply = reply
        self.modes = modes
        self.metrics = metrics
    }

    /// The loop modes a job of protocol mode `mode` runs in: none given means
    /// the default mode; "common" means every mode the worker runs.
    static func loopModes(_ mode: String?) -> [Loop.Mode]? {
        switch mode {
        case nil: defaultModes
        case "common": nil
        case let m?: [Worker.loopMode(m)]
        }
    }

    /// The modes of a job that names none: one array shared by all of
    /// them, instead of one allocated per job.
    static let defaultModes: [Loop.Mode] = [.default]

    /// The state a client sees now (main thread). A job its lane has
    /// claimed but not yet reported shows as running; a waiting job whose
    /// worker's mode does not admit it shows as held; a delayed job whose
    /// delay has passed shows as queued (or held).
    ///
    /// `now` (monotonic ns) is read only for a delayed job, and only when
    /// not given: a caller asking many jobs passes one reading.
    func visibleState(now: UInt64? = nil) -> JobState {
        switch state {
        case .ended(let end): return end.protocolState
        case .running: return .running
        case .forgotten: preconditionFailure("job \(id) was forgotten: nothing may ask its state")
        case .accepted, .awaitingCommit:
            return handOverDelayMs > 0 ? .delayed : waitingState
        case .delayed(let until):
            if claim.isStarted { return .running }
            return (now ?? monotonicNanoseconds()) < until ? .delayed : waitingState
        case .queued:
            return claim.isStarted ? .running : waitingState
        }
    }

    /// Moves the job to `next` and returns the state it left. A move the
    /// life cycle does not allow (`State.allows`) is a bug: it traps in
    /// debug builds. `JobScheduler.move(_:to:)` is the one caller, and logs it.
    func advance(to next: State) -> State {
        assert(state.allows(next), "job \(id) cannot go from \(state) to \(next)")
        defer { state = next }
        return state
    }

    /// Queued, or held while its worker's mode does not admit it.
    private var waitingState: JobState { worker.admits(modes) ? .queued : .held }
}

/// Where a reply about a job goes: the connection's reply sink and the id
/// of the request it answers.
struct ReplyAddress: Sendable {
    let sink: ReplySink
    let requestID: RequestID?
}
