import LoopRuntime
import LoopdProtocol
import Synchronization

/// One submitted job. Its request data is immutable and shared with the
/// worker; `phase` is the one field both sides change (with compare-and-swap,
/// so a cancel and a start can never both win); the rest is main-thread only.
final class Job: @unchecked Sendable {
    /// Where the job is, as the worker and `cancel` race over it.
    enum Phase: UInt8 {
        case pending = 0, running, cancelled, finished
    }

    // MARK: immutable, any thread
    let id: String
    let request: SubmitRequest
    let action: any JobAction
    let worker: Worker
    /// Who submitted it (SO_PEERCRED / SO_PEERGROUPS, or the journal's
    /// record on a replay): status and cancel are the owner's.
    let owner: JobOwner
    var clientUID: UInt32 { owner.uid }
    /// The loop modes whose runs may start it (nil: the worker's common modes).
    let modes: [Loop.Mode]?
    /// Monotonic nanoseconds at acceptance, for the latency summary.
    let acceptedAt: UInt64
    /// Unix milliseconds at submission (kept across a replay).
    let submittedAtUnixMs: Int64
    /// Where the reply of a `wait` submit goes. The worker that runs the job
    /// writes it there itself; if the job never runs (cancelled, or its
    /// commit failed) the main thread does.
    let reply: DirectReply?

    // MARK: any thread
    private let phaseBits = Atomic<UInt8>(Phase.pending.rawValue)
    /// The delayed request on the worker, for `cancel` (set once, on the main thread, before the job is visible to cancel).
    nonisolated(unsafe) var delayToken: PerformToken?

    // MARK: main thread only
    var state: JobState
    var result: JSON?
    var error: ProtocolError?
    /// Waiting for its journal record to be committed before it may run.
    var awaitingCommit = false

    init(id: String, request: SubmitRequest, action: any JobAction, worker: Worker, owner: JobOwner,
         acceptedAt: UInt64, submittedAtUnixMs: Int64, reply: DirectReply? = nil) {
        self.id = id
        self.request = request
        self.action = action
        self.worker = worker
        self.owner = owner
        self.acceptedAt = acceptedAt
        self.submittedAtUnixMs = submittedAtUnixMs
        self.reply = reply
        self.modes = Job.loopModes(request.mode)
        self.state = request.delayMs > 0 ? .delayed : .queued
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

    var phase: Phase { Phase(rawValue: phaseBits.load(ordering: .acquiring))! }

    /// Moves `from` → `to`; false if another thread moved it first.
    func transition(from: Phase, to: Phase) -> Bool {
        phaseBits.compareExchange(expected: from.rawValue, desired: to.rawValue, ordering: .acquiringAndReleasing).exchanged
    }

    /// The state a client sees now. A job its worker has ended but whose
    /// end this thread has not recorded yet still shows as running.
    var visibleState: JobState {
        if state.isFinal { return state }
        switch phase {
        case .running, .finished: return .running
        case .pending, .cancelled: return state
        }
    }

    /// The fields describing the job in `submit` and `status` replies.
    func replyFields(includeDetails: Bool) -> [(String, JSON)] {
        replyFields(state: visibleState, result: result, includeDetails: includeDetails)
    }

    /// `replyFields(includeDetails:)` for a given state and result (a
    /// worker's reply, written before this thread recorded them). Any thread.
    func replyFields(state: JobState, result: JSON?, includeDetails: Bool = false) -> [(String, JSON)] {
        var f: [(String, JSON)] = [("job", .string(id)), ("state", .string(state.rawValue)), ("worker", .string(worker.name))]
        if includeDetails {
            f.append(("action", .string(request.action)))
            f.append(("durable", .bool(request.durable)))
        }
        if let result { f.append(("result", result)) }
        return f
    }
}
