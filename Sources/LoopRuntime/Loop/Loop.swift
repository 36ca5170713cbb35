import LoopPlatform
import Synchronization
#if canImport(Glibc)
import Glibc  // pid_t
#endif

/// A run loop: Apple's CFRunLoop model on epoll, eventfd and timerfd.
///
/// Each thread has at most one loop (`Loop.current`, R1); it runs only when
/// its thread calls `run` (R2), watching the sources and timers of one mode
/// at a time (R4) and sleeping in the kernel (`LoopBackend`: epoll) when
/// there is nothing to do.
/// Every method is safe to call from any thread; sources, timers, observers
/// and blocks run only on the loop's own thread.
public final class Loop: @unchecked Sendable {
    // MARK: immutable after init, any thread
    /// Where the loop watches its descriptors, sleeps, and is woken.
    let backend: any LoopBackend
    /// Kernel thread id of the thread this loop belongs to.
    let threadID: pid_t
    /// Whether this is the main thread's loop (it serves the Dispatch main queue, R27).
    public let isMain: Bool

    // MARK: guarded by the inbox's own mutex, any thread
    /// Queued blocks and the sleep handshake (see `Inbox`). Taken inside
    /// `lock` when both are needed, never the other way round.
    ///
    /// Declared among the fields nobody writes after init, so the pointer a
    /// producer reads on every `perform` shares its cache line with nothing
    /// the loop thread writes per pass (declared below `clockStorage` it sat
    /// beside `spareBlocks`, which every drain swaps).
    let inbox = Locked(Inbox())

    // MARK: guarded by lock, any thread
    //
    // This state and the loop thread's below are read and written on every
    // pass. Their exclusive access is the lock's or the loop thread's to
    // keep, so the hot ones opt out of the runtime's exclusivity checks
    // (`@exclusivity(unchecked)`), which cost more than most of the
    // accesses they guard.
    let lock = Lock()
    @exclusivity(unchecked) var modes: [Mode: ModeItems] = [:]
    /// The common set (R7), in the order modes joined it.
    @exclusivity(unchecked) var commonModes: [Mode] = [.default]
    var common = CommonItems()
    /// One flag per run in progress, innermost last: whether `stop()` was
    /// called while that run was the innermost one (R20). A run pushes its
    /// flag as it enters and pops it as it returns, so a stop belongs to the
    /// run it was aimed at, as CF's per-run data does.
    @exclusivity(unchecked) var runStops: [Bool] = []
    /// The innermost running mode.
    var runningMode: Mode?
    /// The version-1 sources in the epoll set, by token.
    @exclusivity(unchecked) var registered: [UInt64: (source: KernelSource, interest: IOInterest)] = [:]
    /// The source a ready event last named, found in `registered`, until
    /// that set changes: a loop busy with one descriptor (a client's
    /// socket, a lane's wake-up) finds it again without hashing its token.
    @exclusivity(unchecked) var lastReady: (token: UInt64, source: KernelSource)?
    var clockStorage: LoopClock = .system

    // MARK: loop thread only
    /// The mode the epoll set was last built for.
    var registeredMode: Mode?
    var mainQueueRegistered = false
    /// How many main-queue drains are under way on this thread (R27: a run
    /// nested inside a main-queue block neither counts nor serves the queue).
    var mainQueueDrains = 0
    /// An empty buffer with capacity, swapped with the inbox's to drain it without allocating.
    @exclusivity(unchecked) var spareBlocks = BlockBuffer()
    /// Blocks the sleep decision took from the inbox because it found them
    /// queued, for the next `runBlocks` (step 10) to run without taking the
    /// inbox's lock again. Older than every block still in the inbox; empty
    /// outside the stretch from that decision to the next `runBlocks`.
    @exclusivity(unchecked) var carriedBlocks = BlockBuffer()
    /// An empty list with capacity, for the timers one pass fires (R12).
    @exclusivity(unchecked) var spareDueTimers: [TimerHeap.Entry] = []
    /// An empty list with capacity, for the version-1 sources one pass finds ready.
    @exclusivity(unchecked) var spareReadySources: [(KernelSource, ReadinessEvent)] = []
    /// The observer this loop is calling now, the innermost: a run nested
    /// in its handler does not call it again (R16). Loop thread only.
    @exclusivity(unchecked) var firingObserver: ObjectIdentifier?
    /// The observers being called further out, outermost first: empty
    /// unless a handler nests a run, so a notification touches no list.
    @exclusivity(unchecked) var outerFiringObservers: [ObjectIdentifier] = []
    /// The latest answer to "is this mode in the common set?", valid while
    /// `commonModeCount` still equals `count` (the set only grows).
    @exclusivity(unchecked) var commonModeCache: (mode: Mode, count: Int, isCommon: Bool)?

    // MARK: atomics, any thread
    let waitingFlag = Atomic<Bool>(false)
    /// Coarse monotonic nanoseconds when the current callout began; 0 outside callouts.
    let calloutStart = Atomic<UInt64>(0)
    /// Coarse monotonic nanoseconds of the latest pass.
    let lastTurnStamp = Atomic<UInt64>(0)
    let wakeUps = Atomic<UInt64>(0)
    /// How many modes `commonModes` holds, stored under `lock` when it grows
    /// and read without it, so a pass knows when its cached
    /// `commonModeCache` is stale.
    let commonModeCount = Atomic<Int>(1)
    /// Some mode's version-1 sources changed since the epoll set was built.
    /// Set and cleared under `lock`; read without it so a pass skips the
    /// lock when the set is current (the decision to sleep re-reads it
    /// under the lock, so a change is never slept through).
    let kernelSetDirty = Atomic<Bool>(true)
    /// `spinBeforeSleeping` in nanoseconds; 0: off.
    let spinNanoseconds = Atomic<Int64>(0)
    /// Set by a waker that found the loop spinning (`Inbox.Waiting.spinning`);
    /// cleared by the loop before it starts a spin.
    let spinPoke = Atomic<Bool>(false)
    /// Whether the inbox holds blocks: stored under the inbox's mutex
    /// wherever its queue gains or loses them, read without it by
    /// `runBlocks`, so a pass with nothing queued takes no lock. A block
    /// queued while the loop looks was queued after the look, and runs at
    /// the next pass; the sleep decision reads the queue under the mutex.
    let blocksQueued = Atomic<Bool>(false)
    /// How many flags of `runStops` are set: changed under `lock` with
    /// them, read without it as a pass ends, which then takes the lock
    /// only when some run on this thread was stopped or the mode has no
    /// source or timer left (R3, R20).
    let stopMarks = Atomic<Int>(0)

    static let wakeToken: UInt64 = 1
    static let timerToken: UInt64 = 2
    static let mainQueueToken: UInt64 = 3

    init(threadID: pid_t, isMain: Bool, backend: any LoopBackend) {
        self.threadID = threadID
        self.isMain = isMain
        self.backend = backend
        lastTurnStamp.store(coarseMonotonicNanoseconds(), ordering: .relaxed)
    }

    deinit {
        if case .manual(let clock) = clockStorage { clock.removeListener(ObjectIdentifier(self)) }
    }

    // MARK: the thread's loop

    /// The calling thread's loop, created on first use (R1).
    public static var current: Loop { LoopRegistry.shared.currentLoop() }

    /// The main thread's loop, from any thread.
    public static var main: Loop { LoopRegistry.shared.mainLoop() }

    /// Whether the calling thread is the process's main thread.
    public static var isMainThread: Bool { currentThreadID() == processID() }

    /// Whether the calling thread is this loop's thread.
    public var isCurrentThread: Bool { LoopRegistry.shared.currentLoopIfAny() === self }

    // MARK: clock

    /// Where this loop reads the time. Set it before scheduling timers; a
    /// `.manual` clock wakes the loop whenever it is advanced.
    public var clock: LoopClock {
        get { lock.withLock { clockStorage } }
        set {
            let old = lock.withLock { () -> LoopClock in
                let old = clockStorage
                clockStorage = newValue
                return old
            }
            if case .manual(let c) = old { c.removeListener(ObjectIdentifier(self)) }
            if case .manual(let c) = newValue {
                c.addListener(ObjectIdentifier(self)) { [weak self] in self?.wakeUp() }
            }
            wakeUp()
        }
    }

    // MARK: state readable from any thread

    /// The mode of the innermost run in progress, nil when not running.
    public var currentMode: Mode? { lock.withLock { runningMode } }

    /// Whether the loop is asleep in the kernel right now.
    public var isWaiting: Bool { waitingFlag.load(ordering: .acquiring) }

    /// How many times the loop came back from a blocking wait (not counting
    /// passes that did not sleep). An idle loop's count stands still.
    public var wakeUpCount: UInt64 { wakeUps.load(ordering: .relaxed) }

    // MARK: waking and stopping

    /// Wakes the loop if it sleeps; if it is awake, its next wait returns at
    /// once (R19). Any thread.
    public func wakeUp() {
        deliver(inbox.withLock { $0.requestWake() })
    }

    /// Carries out an inbox's wake decision, after its lock is released.
    @inline(__always)
    func deliver(_ wake: Inbox.Wake) {
        switch wake {
        case .nothing: break
        case .signal: backend.wake()
        case .poke: spinPoke.store(true, ordering: .releasing)
        }
    }

    /// Ends the run in progress, the innermost one if runs nest, after its
    /// remaining notifications (exit is still sent). The stop belongs to that
    /// run: a run begun after the call, such as one nested by a later
    /// handler, is not stopped by it, and on a loop that is not running the
    /// call does nothing, as `CFRunLoopStop` (R20). Any thread.
    public func stop() {
        let marked = lock.withLock { () -> Bool in
            guard let last = runStops.indices.last else { return false }
            if !runStops[last] {
                runStops[last] = true
                stopMarks.add(1, ordering: .releasing)
            }
            return true
        }
        if marked { wakeUp() }
    }

    /// Wakes the loop only if it is asleep: for changes that matter to a
    /// sleeping loop (a new timer, a new source) but that an awake loop sees
    /// on its own before it sleeps. Call with the lock held (the loop
    /// decides to sleep under it, so the change is either seen by that
    /// decision or finds the loop asleep); returns whether the caller must
    /// write the eventfd after unlocking.
    func wakeIfSleepingLocked() -> Bool {
        switch inbox.withLock({ $0.signalIfSleeping() }) {
        case .nothing: return false
        case .signal: return true
        case .poke:
            spinPoke.store(true, ordering: .releasing)
            return false
        }
    }
}
