import LoopPlatform
import LoopRuntime
import Synchronization

/// What a worker's lane tells the main loop: the one message type between
/// the two sides of the job pipeline.
enum LaneReport {
    /// A job started and is still running at the end of the lane's pass
    /// (a job that ends in the pass it started is reported by its end alone).
    case started(Job)
    /// Jobs that ended, in the order they ended, with how; the lane writes
    /// the waited ones' replies itself when `repliesWrittenByLane` (the main
    /// loop slept), else leaves them to the main loop.
    case ended([JobEnd], repliesWrittenByLane: Bool)
    /// Sinks the main loop must flush with its batch: the lane encoded
    /// replies there and left them to it, or its own write there left bytes
    /// unsent, failed, or settled a draining connection (which then closes).
    case flush([ReplySink])
}

/// One job's end as its lane saw it: how its action completed, and what
/// its processes used when the action knows.
struct JobEnd {
    let job: Job
    let outcome: ActionOutcome
    let usage: JobUsage?
}

/// The lanes' reports on their way to the main loop, oldest first.
///
/// Not every report needs the main loop now. One that asks something of it
/// (replies it must write, a retry to schedule, a durable end to commit) is
/// urgent: it queues a take, which wakes the loop. Any other (a job that
/// started, an end no one waits for) is lazy: it waits for the next request
/// the main loop reads (a connection takes the reports first), or at most
/// `lag`, for a timer that the first lazy report since it last fired arms.
/// A sequential client's job then costs two wake-ups, not three, and the
/// main loop's passes call nothing for the mailbox. While
/// the main side wants every end at once (`wantEveryReport`: a parked
/// `wait`, a fleet that claims work for freed lanes), every report is urgent.
///
/// The pipeline's ordering rule holds either way: a lane posts a job's end
/// before it writes the job's reply, and the main loop takes the reports
/// before it reads any request (`JobScheduler.recordReports()`), so a
/// request a client sends after reading that reply finds the end recorded.
final class LaneMailbox: @unchecked Sendable {
    /// Why the main side wants every report at once (bits of `wanted`).
    enum Want: UInt8 {
        case waiters = 1
        case fleet = 2
    }

    /// How long a lazy report may wait for the main loop, by default.
    static let defaultLag: Duration = .milliseconds(10)

    private let state = Locked<MailboxState<LaneReport>>(MailboxState())
    /// Whether `state` may hold reports: lets the main thread skip the lock
    /// on every connection read while nothing was posted.
    private let nonEmpty = Atomic<Bool>(false)
    /// The `Want`s in force; any makes every report urgent.
    private let wanted = Atomic<UInt8>(0)
    /// The lag timer, on the main loop. Armed and drained under `state`'s lock.
    private let lagTimer: TimerFD
    private let lagNanoseconds = Atomic<UInt64>(0)
    private let mainLoop: Loop
    private let take: @Sendable () -> Void
    /// The lag timer's source, on the main loop; set once in `init`, and
    /// taken off the loop in `deinit`.
    private var lagSource: LoopFileDescriptorSource?

    /// `take` runs on `mainLoop` when reports are due, and takes them.
    init(mainLoop: Loop, take: @escaping @Sendable () -> Void) {
        self.mainLoop = mainLoop
        self.take = take
        do {
            lagTimer = try TimerFD()
        } catch {
            fatalError("cannot create the lane mailbox's timer: \(error)")
        }
        setLag(Self.defaultLag)
        // It holds what it uses, not the mailbox: a mailbox that goes (a
        // test's) takes it off the loop in `deinit`, and it may be running
        // then.
        //
        // No observer takes the reports as a pass ends: called on every
        // pass, one cost a lock and a clock read, and made the loop poll
        // its descriptors once more before each sleep (R17 step 5), for
        // ends that no request had asked about yet.
        let state = state, lagTimer = lagTimer
        let source = LoopFileDescriptorSource(fileDescriptor: lagTimer.fd, interest: .readable) { _ in
            state.withLock { s in
                lagTimer.drain()
                s.lagFired()
            }
            take()
        }
        lagSource = source
        mainLoop.add(source, forMode: .common)
    }

    deinit {
        lagSource?.invalidate()
    }

    /// How long a lazy report may wait; tests lengthen it to catch a wake-up that should not happen.
    func setLag(_ lag: Duration) {
        let (seconds, attoseconds) = lag.components
        lagNanoseconds.store(UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000), ordering: .relaxed)
    }

    /// Posts a report; `urgent` wakes the main loop for it. Any thread.
    func post(_ report: LaneReport, urgent: Bool) {
        // While the main side wants every report, this one is urgent from
        // the start: it must not arm the lag timer only to be hurried after.
        // (The load after the post below still catches a want that starts
        // between the two.)
        let urgent = urgent || wanted.load(ordering: .relaxed) != 0
        let step = state.withLock { s in
            let step = s.post(report, urgent: urgent)
            // Sequentially consistent, as is the load of `wanted` below, and
            // as are `wantEveryReport`'s store and load in the other order:
            // a main side that starts wanting reports as this lazy one
            // arrives either finds it here or is found by this post.
            nonEmpty.store(true, ordering: .sequentiallyConsistent)
            if step == .armLag {
                lagTimer.arm(at: monotonicNanoseconds() + lagNanoseconds.load(ordering: .relaxed))
            }
            return step
        }
        if step == .queueTake {
            mainLoop.perform(take)
        } else if !urgent, wanted.load(ordering: .sequentiallyConsistent) != 0 {
            takeSoon()
        }
    }

    /// The main side starts (`true`) or stops wanting every report at once,
    /// for `reason`. Main thread.
    func wantEveryReport(_ reason: Want, _ wants: Bool) {
        if wants {
            wanted.bitwiseOr(reason.rawValue, ordering: .sequentiallyConsistent)
            // A lazy report posted before the store above is taken now.
            if nonEmpty.load(ordering: .sequentiallyConsistent) { takeSoon() }
        } else {
            wanted.bitwiseAnd(~reason.rawValue, ordering: .sequentiallyConsistent)
        }
    }

    /// Queues a take unless one is queued or nothing waits.
    private func takeSoon() {
        if state.withLock({ $0.hurry() }) { mainLoop.perform(take) }
    }

    /// Swaps everything posted so far, oldest first, into `taken` (empty,
    /// its capacity left to the mailbox); false if nothing was posted.
    /// Main thread.
    func takeAll(swappingWith taken: inout [LaneReport]) -> Bool {
        guard nonEmpty.load(ordering: .acquiring) else { return false }
        state.withLock { s in
            nonEmpty.store(false, ordering: .relaxed)
            s.takeAll(swappingWith: &taken)
        }
        return true
    }

    /// Whether a take is queued on the main loop (tests: a lazy report
    /// must not have queued one).
    var takeIsQueued: Bool { state.withLock { $0.takeQueued } }

    /// Whether the lag timer is armed (tests: a report that is urgent from
    /// the start must not arm it).
    var lagIsArmed: Bool { state.withLock { $0.lagArmed } }

    /// The lag timer's descriptor, which the main loop watches (tests that
    /// play the kernel make it fire).
    var lagDescriptor: Int32 { lagTimer.fd }

    /// Whether reports wait to be taken. Any thread.
    var holdsReports: Bool { nonEmpty.load(ordering: .acquiring) }
}

/// What a mailbox does as reports come and go: the bookkeeping of
/// `LaneMailbox`, apart from its lock, its loop and its timer.
struct MailboxState<Report> {
    /// What a post asks of its poster.
    enum Step: Equatable {
        /// Nothing: a take is queued, or the lag timer is armed.
        case none
        /// Queue a take on the main loop (it wakes it), once the lock is released.
        case queueTake
        /// Arm the lag timer: the first lazy report since it last fired.
        case armLag
    }

    private(set) var reports: [Report] = []
    /// A take is queued on the main loop and has not run.
    private(set) var takeQueued = false
    /// The lag timer is armed and has not fired.
    private(set) var lagArmed = false

    mutating func post(_ report: Report, urgent: Bool) -> Step {
        reports.append(report)
        if takeQueued { return .none }
        if urgent {
            takeQueued = true
            return .queueTake
        }
        if lagArmed { return .none }
        lagArmed = true
        return .armLag
    }

    /// A lazy report became urgent: whether to queue a take now.
    mutating func hurry() -> Bool {
        guard !takeQueued, !reports.isEmpty else { return false }
        takeQueued = true
        return true
    }

    /// The lag timer fired. It stays disarmed until the next lazy report:
    /// one that finds it armed is taken by its firing, within the lag.
    mutating func lagFired() {
        lagArmed = false
    }

    /// Swaps the reports, oldest first, into `taken`, whose buffer (empty)
    /// the next posts fill: two buffers change hands and neither is made
    /// anew. None waits after this, so no take is owed (one queued already
    /// runs and finds nothing).
    mutating func takeAll(swappingWith taken: inout [Report]) {
        precondition(taken.isEmpty, "the reports would be lost")
        takeQueued = false
        swap(&reports, &taken)
    }
}
