import LoopPlatform
import LoopRuntime
import LoopdProtocol
import Synchronization

/// The worker thread's side of the job pipeline: its serial lane. Jobs
/// arrive in order and start by priority (`JobReadyQueue`); one runs at a
/// time; a job whose mode the loop is not running now waits here for that
/// mode while later jobs of the running mode proceed, and when the mode
/// comes, the jobs waiting for it start by priority too. Everything the
/// lane learns goes to the main loop as `LaneReport`s. Worker thread only,
/// `init` aside.
final class JobLane: @unchecked Sendable {
    let worker: Worker
    private let mailbox: LaneMailbox
    /// The main side's loop: whether it sleeps decides who writes a reply.
    private let mainLoop: Loop
    /// Write every reply at once, even while the main loop is awake. Tests
    /// only: it lets a test hold the main loop and still get the reply.
    let writesRepliesAlways = Atomic<Bool>(false)
    /// Ends reported together when `pump` has started what it can.
    @exclusivity(unchecked) private var finishedBatch: [JobEnd] = []
    @exclusivity(unchecked) private var ready = JobReadyQueue()
    /// The job running now, and when it started (monotonic nanoseconds).
    @exclusivity(unchecked) private var running: (job: Job, context: ActionContext, timeout: LoopTimer?, startedAt: UInt64)?
    private var pumping = false
    /// loopd is stopping (`shutDownRunning`): no job starts any more.
    private var stopping = false
    private var observer: LoopObserver?
    /// When the job that just ended did (Unix milliseconds, monotonic
    /// nanoseconds), while `pump` goes on to the next: that one starts at
    /// the same instant (one reading of each clock, not two).
    @exclusivity(unchecked) private var handOffAt: (unixMs: Int64, monotonic: UInt64)?

    private var loop: Loop { worker.loop }

    /// The mode of the loop's innermost run, as the lane last read it. A
    /// run's start or end forgets it, and the next look reads it again: one
    /// read of the loop's mode (under its lock) per run, not one per job.
    private let modeOfRun = RunModeMemo()

    private var currentMode: Loop.Mode? {
        if !modeOfRun.isKnown {
            modeOfRun.mode = loop.currentMode
            modeOfRun.isKnown = true
        }
        return modeOfRun.mode
    }

    /// A lane for `worker`; its observer is installed on the worker's
    /// thread before `init` returns.
    init(worker: Worker, mailbox: LaneMailbox, mainLoop: Loop) {
        self.worker = worker
        self.mailbox = mailbox
        self.mainLoop = mainLoop
        worker.thread.perform(waitUntilDone: true, modes: [.common]) { [self] in installObserver() }
    }

    /// Re-examines the lane whenever a run starts: a mode change may admit
    /// a waiting job. A run's end forgets its mode: the outer run's applies
    /// again (it is read after the run has returned, not during its exit).
    /// An end touches only the memo, not the lane: the worker's last run
    /// ends after a lane that is gone (a daemon that failed to start).
    private func installObserver() {
        let memo = modeOfRun
        let o = LoopObserver(activities: [.entry, .exit], repeats: true, order: 0) { [unowned self] _, activity in
            memo.isKnown = false
            if activity == .entry { pump() }
        }
        observer = o
        loop.add(o, forMode: .common)
    }

    /// Jobs handed over by the main thread, in whatever mode the loop runs.
    func arrive(_ jobs: [Job]) {
        ready.append(contentsOf: jobs)
        pump()
    }

    /// One job handed over alone.
    func arrive(_ job: Job) {
        ready.append(job)
        pump()
    }

    /// Stops `job` if it is running: its action's cancel hook, or, for an
    /// action without one, an end at once. A job that ended already is
    /// left alone (its end is on its way to the main loop).
    func cancelRunning(_ job: Job, by uid: UInt32) {
        guard let current = running, current.job === job else { return }
        current.context.cancel(ProtocolError(.cancelled, "job \(job.id) was cancelled by uid \(uid) while it ran"))
    }

    /// loopd stops with a job still running after the shutdown grace: its
    /// action's shutdown hook (an exec job's tree is stopped). The job is
    /// not ended; new jobs no longer start.
    func shutDownRunning() {
        stopping = true
        running?.context.shutDown()
    }

    /// Starts ready jobs one after another until one is still running or
    /// none is admitted, then reports the ends among them in one hand-off.
    /// Iterative, so a run of jobs that finish at once does not nest calls.
    private func pump() {
        guard !pumping else { return }
        pumping = true
        defer {
            pumping = false
            handOffAt = nil
            if !finishedBatch.isEmpty { reportFinished() }
        }
        while running == nil && !stopping {
            let mode = currentMode
            guard let job = ready.takeFirst(where: { $0.runs(in: mode) }) else { return }
            guard job.claim.start() else { continue }  // cancelled meanwhile
            start(job)
        }
    }

    private func start(_ job: Job) {
        let now = handOffAt ?? (unixMilliseconds(), monotonicNanoseconds())
        job.startedAtUnixMs = now.unixMs
        handOffAt = nil
        worker.runningJob.current = RunningJob(jobID: job.id, action: job.actionName, ownerUID: job.clientUID,
                                               startedAtUnixMs: now.unixMs)
        let context = ActionContext(job: job, lane: self, loop: loop, workerName: worker.name)
        var timeoutTimer: LoopTimer?
        if let ms = job.timeoutMs ?? job.action.defaultTimeoutMs {
            let t = LoopTimer(after: .milliseconds(ms)) { _ in
                context.stop(ProtocolError(.timeout, "job ran past its \(ms) ms timeout"), hook: \.onTimeout)
            }
            loop.add(t, forMode: .common)
            timeoutTimer = t
        }
        running = (job, context, timeoutTimer, now.monotonic)
        job.action.start(context)
        // Still running once its action returned: the main loop learns it
        // started now, not only when it ends.
        if let current = running, current.job === job { mailbox.post(.started(job), urgent: false) }
    }

    /// `job`'s action completed (`ActionContext.complete`).
    func finished(_ job: Job, _ outcome: ActionOutcome, _ usage: JobUsage?) {
        guard let current = running, current.job === job else { return }
        current.timeout?.invalidate()
        running = nil
        let now = (unixMs: unixMilliseconds(), monotonic: monotonicNanoseconds())
        job.endedAtUnixMs = now.unixMs
        // Recorded here, before the end is reported or the reply written:
        // a client that has the reply finds the job in the histograms.
        job.metrics.ran(acceptedAt: job.acceptedAt, startedAt: current.startedAt, endedAt: now.monotonic)
        handOffAt = now
        worker.runningJob.current = nil
        finishedBatch.append(JobEnd(job: job, outcome: outcome, usage: usage))
        pump()  // reports the end, with those of the jobs it starts and that end at once
    }

    /// Reports the batch's ends, then answers the clients that wait for
    /// them. The ends go first (the ordering rule of `LaneMailbox`). With
    /// the main loop asleep the replies go out now, one hand-off sooner;
    /// with it awake, it writes them with its own batch (one write per
    /// connection, not one per thread).
    private func reportFinished() {
        let done = finishedBatch
        finishedBatch = []
        // An attempt another follows answers nobody: the job's last attempt
        // does. Decided before the post: after it the main thread may
        // already be setting up the next attempt.
        let answered = done.contains { $0.job.reply != nil && $0.job.willRetry(after: $0.outcome) }
            ? done.filter { !$0.job.willRetry(after: $0.outcome) } : done
        // Whether the main loop sleeps is read before the post: an urgent
        // post wakes it, and would then always find it awake.
        let writeNow = writesRepliesAlways.load(ordering: .relaxed) || mainLoop.isWaiting
        // Ends that ask nothing more of the main loop at once wait for it
        // (`LaneMailbox`): replies it must write come as `.flush`, urgent.
        let urgent = done.contains { $0.job.durable || $0.job.willRetry(after: $0.outcome) }
        mailbox.post(.ended(done, repliesWrittenByLane: writeNow), urgent: urgent)
        let sinks = answer(answered, writeNow: writeNow)
        if !sinks.isEmpty { mailbox.post(.flush(sinks), urgent: true) }
    }

    /// Encodes the replies of the waited jobs among `done`, in the order
    /// the jobs ended, and with `writeNow` writes them: one write per sink
    /// (a pipelining client's replies of a pass go out together). Returns
    /// the sinks the main loop must flush (without `writeNow`: all of them)
    /// or look at (with it: see `ReplySink.deliver`).
    private func answer(_ done: [JobEnd], writeNow: Bool) -> [ReplySink] {
        guard let first = done.first(where: { $0.job.reply != nil })?.job.reply?.sink else { return [] }
        if done.allSatisfy({ $0.job.reply == nil || $0.job.reply!.sink === first }) {
            return deliver(done, to: first, writeNow: writeNow) == .needed || !writeNow ? [first] : []
        }
        // Many clients: each sink's ends, in the order they ended, one write each.
        var groups: [ObjectIdentifier: [JobEnd]] = [:]
        var sinks: [ReplySink] = []
        for end in done {
            guard let sink = end.job.reply?.sink else { continue }
            let key = ObjectIdentifier(sink)
            if groups[key] == nil { sinks.append(sink) }
            groups[key, default: []].append(end)
        }
        return sinks.filter { deliver(groups[ObjectIdentifier($0)]!, to: $0, writeNow: writeNow) == .needed || !writeNow }
    }

    /// Encodes (and with `writeNow` writes) the replies among `ends` that go to `sink`.
    private func deliver(_ ends: [JobEnd], to sink: ReplySink, writeNow: Bool) -> ReplySink.Attention {
        let count = ends.count { $0.job.reply?.sink === sink }
        return sink.deliver(count, writeNow: writeNow) { out in
            for end in ends {
                guard let reply = end.job.reply, reply.sink === sink else { continue }
                // Made on the stack first: one append, not one a piece.
                out.appendFormatted(stackBytes: 512, {
                    JobReply.write(end.job, endedWith: end.outcome, usage: end.usage, requestID: reply.requestID, into: &$0)
                }, else: {
                    JobReply.write(end.job, endedWith: end.outcome, usage: end.usage, requestID: reply.requestID, into: &$0)
                })
            }
        }
    }
}

/// `JobLane.modeOfRun`: the worker's run mode as the lane last read it, and
/// whether that reading still holds. Worker thread only.
final class RunModeMemo: @unchecked Sendable {
    @exclusivity(unchecked) var mode: Loop.Mode?
    var isKnown = false
}
