import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// One submitted job. What was asked is immutable and shared with the
/// worker that runs it; where the job is in its life (`state`) belongs to
/// the main thread and changes only through `JobScheduler`; `claim` is the
/// one thing both threads change (a cancel and a start can never both win).
///
/// A job is small, because a queue may hold millions of them (a delayed
/// `noop` costs the daemon under 200 bytes, docs/OPERATIONS.md, "Memory"):
/// what jobs share is one reference (`kind`, `origin`), the rarely set
/// parts of a submit are one optional reference (`extras`), and what only
/// an ended, cancelled or retried job has is made when it is first needed
/// (`record`).
final class Job: @unchecked Sendable {
    // The stored fields are in the order that packs them: the one-, two-
    // and four-byte fields follow `timeoutMs`, filling what its optional
    // leaves of its last word (`QueueScaleTests` holds the size).

    // MARK: immutable, any thread
    let id: String
    /// Submission order within this run of the daemon: `jobs` pages by it.
    let sequence: UInt64
    /// Its action on its worker, with their metrics.
    let kind: JobKind
    /// Who submitted it, and where the reply of a waited `submit` goes.
    let origin: JobOrigin
    let args: [String]
    /// `delay_ms` of the submit.
    let delayMs: Int64
    /// Monotonic nanoseconds at acceptance, for the latency summary.
    let acceptedAt: UInt64
    /// Unix milliseconds at submission (kept across a replay).
    let submittedAtUnixMs: Int64
    /// Placement, mode, expiry, retries and unique key, when any is set.
    let extras: SubmitExtras?
    /// `timeout_ms` of the submit; nil: the action's default.
    let timeoutMs: Int64?
    let durable: Bool

    // MARK: any thread
    /// Who got to the waiting job first: its lane, to start it, or a cancel.
    let claim = JobClaim()

    // MARK: main thread only
    /// Where it is in its life; only `advance(to:)` changes it.
    private(set) var state = State.accepted

    // MARK: written by the main thread before each hand-over; read by the lane after it
    private nonisolated(unsafe) var attemptNumber: UInt16 = 1

    // MARK: immutable, any thread
    /// `priority` of the submit.
    let priority: UInt32

    /// The priority it starts by on its lane (`KeyOrder`): set on the main
    /// thread before the hand-over, read by the lane after it.
    nonisolated(unsafe) var runPriority = SubmitRequest.defaultPriority

    // MARK: main thread only
    /// Its places in the scheduler's delay and expiry heaps (`JobDeadlines`); -1: not there.
    var delaySlot: Int32 = -1
    var expirySlot: Int32 = -1
    /// How it ended and what its attempts left: made when first needed,
    /// or, for a waited job, its `WaitingSubmit` from the start.
    private var record: JobRecord?

    // MARK: written by the lane before it reports the job; read by the main thread after the report
    /// When its worker started it, Unix milliseconds; 0 until then.
    nonisolated(unsafe) var startedAtUnixMs: Int64 = 0
    /// When it ended on its worker, Unix milliseconds; 0 until then.
    nonisolated(unsafe) var endedAtUnixMs: Int64 = 0

    init(id: String, sequence: UInt64, request: borrowing SubmitRequest, kind: JobKind, origin: JobOrigin,
         acceptedAt: UInt64, submittedAtUnixMs: Int64) {
        self.id = id
        self.sequence = sequence
        self.kind = kind
        self.origin = origin
        args = request.args
        delayMs = request.delayMs
        timeoutMs = request.timeoutMs
        durable = request.durable
        priority = request.priority
        extras = SubmitExtras.of(request)
        if case .waiting(let w) = origin { record = w }
        self.acceptedAt = acceptedAt
        self.submittedAtUnixMs = submittedAtUnixMs
    }

    // MARK: shared parts

    var action: any JobAction { kind.action }
    var actionName: String { kind.actionName }
    /// The worker it was placed on, with the main thread's view of its queue.
    var queue: WorkerQueue { kind.queue }
    var worker: Worker { kind.queue.worker }
    /// The metrics it counts in: its lane records its wait and run times,
    /// the main thread its end.
    var metrics: JobMetrics { kind.metrics }
    /// Who submitted it (SO_PEERCRED / SO_PEERGROUPS, or the journal's
    /// record on a replay): status and cancel are the owner's.
    var owner: JobOwner { origin.submitter.owner }
    var clientUID: UInt32 { origin.submitter.owner.uid }
    /// Where the reply of a waited `submit` goes. The worker that runs the
    /// job writes it; if the job never runs, the scheduler does.
    var reply: ReplyAddress? {
        if case .waiting(let w) = origin { return w.address }
        return nil
    }

    // MARK: the submit's rarer fields

    var placement: Placement { extras?.placement ?? .any }
    /// The submit's protocol mode (nil: the default mode).
    var mode: String? { extras?.mode }
    /// The loop modes whose runs may start it (nil: every mode the worker runs).
    var modes: [Loop.Mode]? { extras.map(\.modes) ?? Job.defaultModes }

    /// Whether a run of `mode` (nil: none is known) may start it. A job
    /// without extras runs in the default mode alone: told without making
    /// its modes array (the lane asks for every job it starts).
    func runs(in mode: Loop.Mode?) -> Bool {
        guard let extras else { return mode == .default }
        guard let modes = extras.modes else { return true }
        guard let mode else { return false }
        return modes.contains(mode)
    }
    var expiresInMs: Int64? { extras?.expiresInMs }
    var retries: Int { extras?.retries ?? 0 }
    var retryBackoffMs: Int64 { extras?.retryBackoffMs ?? RequestLimits.defaultRetryBackoffMs }
    var uniqueKey: String? { extras?.uniqueKey }

    // MARK: what its attempts leave

    /// Which attempt runs (or ran last), from 1 (see `JobScheduler+Retries`).
    /// Written by the main thread before each hand-over; read by the lane after it.
    var attempt: Int {
        get { Int(attemptNumber) }
        set { attemptNumber = UInt16(clamping: newValue) }
    }

    /// What it ended with (main thread).
    var result: JSON? {
        get { record?.result }
        set { updateRecord(newValue != nil) { $0.result = newValue } }
    }

    /// What its processes used (main thread).
    var usage: JobUsage? {
        get { record?.usage }
        set { updateRecord(newValue != nil) { $0.usage = newValue } }
    }

    var error: ProtocolError? {
        get { record?.error }
        set { updateRecord(newValue != nil) { $0.error = newValue } }
    }

    /// The uid whose `cancel` request is stopping, or stopped, it.
    var cancelRequestedBy: UInt32? {
        get { record?.cancelRequestedBy }
        set { updateRecord(newValue != nil) { $0.cancelRequestedBy = newValue } }
    }

    /// The failed attempts' errors and the backoff before this attempt.
    var retry: RetryState {
        get { record?.retry ?? RetryState() }
        set { updateRecord(!newValue.isEmpty) { $0.retry = newValue } }
    }

    /// The ended job this one re-runs (`retry`).
    var retryOf: String? {
        get { record?.links?.retryOf }
        set { updateLinks(newValue != nil) { $0.retryOf = newValue } }
    }

    /// The job that re-runs this one, once it ended (`retry`).
    var retriedAs: String? {
        get { record?.links?.retriedAs }
        set { updateLinks(newValue != nil) { $0.retriedAs = newValue } }
    }

    private func updateLinks(_ needed: Bool, _ change: (RetryLinks) -> Void) {
        updateRecord(needed) { record in
            if record.links == nil { record.links = RetryLinks() }
            change(record.links!)
        }
    }

    /// Changes the record, making it first if `needed` (a change to nil
    /// needs none).
    private func updateRecord(_ needed: Bool, _ change: (JobRecord) -> Void) {
        if record == nil {
            guard needed else { return }
            record = JobRecord()
        }
        change(record!)
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
    /// worker's mode does not admit it shows as held.
    func visibleState() -> JobState {
        switch state {
        case .ended(let end): return end.protocolState
        case .running: return .running
        case .forgotten: preconditionFailure("job \(id) was forgotten: nothing may ask its state")
        case .accepted, .awaitingCommit:
            return handOverDelayMs > 0 ? .delayed : waitingState
        case .delayed:
            return .delayed
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
    private var waitingState: JobState { runs(in: worker.runMode) ? .queued : .held }
}

/// Where a reply about a job goes: the connection's reply sink and the id
/// of the request it answers.
struct ReplyAddress: Sendable {
    let sink: ReplySink
    let requestID: RequestID?
}
