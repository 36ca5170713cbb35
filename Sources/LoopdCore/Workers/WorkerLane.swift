import LoopRuntime
import LoopdProtocol
import Synchronization

/// The worker thread's side of a worker: the serial lane. Jobs arrive in
/// order; one runs at a time; a job whose mode the loop is not running now
/// (it arrived, then the mode changed) waits for that mode while later jobs
/// of the running mode proceed. Worker thread only, except `installObserver`
/// which runs there too.
final class WorkerLane: @unchecked Sendable {
    let name: String
    let loop: Loop
    private let report: @Sendable ([(Job, ActionOutcome)]) -> Void
    private let wake: @Sendable ([Int]) -> Void
    private let attention: @Sendable (Int) -> Void
    /// The main side's loop: whether it sleeps decides who writes a reply.
    private let mainLoop: Loop
    /// Write every reply at once, even while the main loop is awake. Tests
    /// only: it lets a test hold the main loop and still get the reply.
    let writesRepliesAlways = Atomic<Bool>(false)
    /// Ends reported together once the current batch of work is done.
    private var finishedBatch: [(Job, ActionOutcome)] = []
    private var ready = ReadyQueue<Job>()
    private var running: (job: Job, context: ActionContext, timeout: LoopTimer?)?
    private var pumping = false
    private var observer: LoopObserver?
    /// Shared with the main side, for `workers`.
    private let runningJob: RunningJobSlot

    init(name: String, loop: Loop, mainLoop: Loop, runningJob: RunningJobSlot,
         report: @escaping @Sendable ([(Job, ActionOutcome)]) -> Void, wake: @escaping @Sendable ([Int]) -> Void,
         attention: @escaping @Sendable (Int) -> Void) {
        self.name = name
        self.loop = loop
        self.mainLoop = mainLoop
        self.runningJob = runningJob
        self.report = report
        self.wake = wake
        self.attention = attention
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
                // The ends are reported before any reply is encoded, so the
                // main thread can see them before any waiting client does.
                // With the main loop asleep the replies go out now, one
                // hand-off sooner; with it awake, it writes them with its own
                // batch (one write per connection, not one per thread).
                report(done)
                if writesRepliesAlways.load(ordering: .relaxed) || mainLoop.isWaiting {
                    wake([])
                    answer(done, writeNow: true)
                } else {
                    wake(answer(done, writeNow: false))
                }
            }
        }
        finishedBatch.append((job, outcome))
        pump()
    }

    /// Encodes the replies of the waited jobs among `done` for their
    /// clients, in the order the jobs ended, and with `writeNow` writes
    /// them: one write per connection (a pipelining client's replies of a
    /// pass go out together). Returns the ids of those connections.
    @discardableResult
    private func answer(_ done: [(Job, ActionOutcome)], writeNow: Bool) -> [Int] {
        guard let first = done.first(where: { $0.0.reply != nil })?.0.reply?.channel else { return [] }
        if done.allSatisfy({ $0.0.reply == nil || $0.0.reply!.channel === first }) {
            deliver(done, to: first, writeNow: writeNow)
            return [first.connectionID]
        }
        var channels: [ObjectIdentifier: [(Job, ActionOutcome)]] = [:]
        var order: [ReplyChannel] = []
        for end in done {
            guard let channel = end.0.reply?.channel else { continue }
            if channels[ObjectIdentifier(channel)] == nil { order.append(channel) }
            channels[ObjectIdentifier(channel), default: []].append(end)
        }
        for channel in order { deliver(channels[ObjectIdentifier(channel)]!, to: channel, writeNow: writeNow) }
        return order.map(\.connectionID)
    }

    /// Encodes (and with `writeNow` writes) the replies among `ends` that go to `channel`.
    private func deliver(_ ends: [(Job, ActionOutcome)], to channel: ReplyChannel, writeNow: Bool) {
        let count = ends.count { $0.0.reply?.channel === channel }
        let needs = channel.deliver(count, writeNow: writeNow) { out in
            for (job, outcome) in ends {
                guard let reply = job.reply, reply.channel === channel else { continue }
                job.writeFinalReply(outcome, requestID: reply.requestID, into: &out)
            }
        }
        if needs == .needed { attention(channel.connectionID) }
    }
}
