/// What one pass does at R17 step 7: block in the kernel, and until when, or
/// only look. The value the pure half of the sleep decision (`WaitFacts`)
/// returns and the kernel half (`Loop.wait`) carries out.
enum WaitPlan: Equatable {
    /// Look at the descriptors without blocking.
    case poll
    /// Block until a descriptor is ready, someone wakes the loop, or the
    /// loop's clock reaches `wake` (nil: nothing timed is pending).
    case block(until: LoopInstant?)
}

/// Everything the sleep decision depends on, gathered by the loop under its
/// lock (and the inbox's, for the last two), so that the decision itself is
/// a pure function tests can call without a loop or a kernel.
struct WaitFacts {
    /// The pass's instant, read once as its step 9 began.
    var now: LoopInstant
    /// The loop's clock moves only when a test advances it, and advancing
    /// it wakes the loop: no kernel timer can stand in for it.
    var clockIsManual = false
    /// A source was handled in this pass, or the run's timeout had passed
    /// at the pass's instant (R17 steps 5 to 7).
    var mustNotBlock = false
    /// `stop()` marked the run (R20).
    var stopped = false
    /// The running mode's version-1 sources changed since the kernel's set
    /// was built: the pass must come round to watch them first (R9).
    var kernelSetChanged = false
    /// When the mode's timers and the run's timeout need the loop awake
    /// (`TimerHeap.wake`); worked out only when `mayBlockBeforeTimers`.
    var wake: LoopInstant? = nil
    /// Blocks queued for a mode this pass runs (R23).
    var blocksQueued = false
    /// `wakeUp()` was called while the loop was awake (R19).
    var wakeRequested = false

    /// Whether the facts read before the timers still allow blocking; when
    /// they do not, `wake` is not worth working out.
    var mayBlockBeforeTimers: Bool { !mustNotBlock && !stopped && !kernelSetChanged }

    /// The decision. The inbox's two facts are read last, in the same
    /// critical section that marks the loop asleep: a block queued or a
    /// wake-up asked for before that point keeps the loop awake, one after
    /// it finds the loop asleep and writes its eventfd (R19).
    var plan: WaitPlan {
        guard mayBlockBeforeTimers, !blocksQueued, !wakeRequested else { return .poll }
        // A manual clock never reaches a wake-up by itself: one already due
        // means look and go round, not sleep for ever.
        if clockIsManual, let wake, wake <= now { return .poll }
        return .block(until: wake)
    }
}
