
/// What other threads hand a loop: the blocks queued by `perform`, and the
/// sleep handshake that decides who writes the loop's wake-up eventfd.
///
/// It lives in `Loop.inbox`, behind a mutex of its own, apart from the loop's
/// `lock` (modes, items, run state): a producer holds it only for an append
/// and never waits behind a mode change, a timer being scheduled, or the
/// loop's own bookkeeping between passes. When both are needed the loop's
/// `lock` is taken first, the inbox's inside it, never the other way round.
struct Inbox: ~Copyable {
    /// Blocks waiting for a pass of an admitting mode, in submission order.
    var blocks = BlockBuffer()
    /// The loop is in, or committed to entering, a blocking wait.
    var sleeping = false
    /// The wake eventfd was written during the current sleep.
    var wakeSignalled = false
    /// `wakeUp()` was called while the loop was awake: its next wait must not block.
    var wakeRequested = false
    /// The loop is spinning before it sleeps (`Loop.spinBeforeSleeping`):
    /// a waker pokes `Loop.spinPoke` instead of writing the eventfd.
    var spinning = false

    /// What a waker must do after unlocking.
    enum Wake {
        case nothing
        /// Write the loop's eventfd: it sleeps.
        case signal
        /// Set `Loop.spinPoke`: it spins.
        case poke
    }

    /// Queues a block; returns what the caller must do after unlocking:
    /// only the first producer to find the loop asleep writes the eventfd.
    @inline(__always)
    mutating func append(_ slot: consuming BlockBuffer.Slot, modes: [Loop.Mode]?) -> Wake {
        blocks.append(slot, modes: modes)
        return signalIfSleeping()
    }

    /// A wake-up for an asleep (or spinning) loop: the eventfd is written
    /// at most once per sleep.
    @inline(__always)
    mutating func signalIfSleeping() -> Wake {
        if spinning { return .poke }
        guard sleeping, !wakeSignalled else { return .nothing }
        wakeSignalled = true
        return .signal
    }

    /// `wakeUp()`: an asleep loop is signalled; an awake one will not block
    /// in its next wait.
    mutating func requestWake() -> Wake {
        if sleeping { return signalIfSleeping() }
        wakeRequested = true
        return spinning ? .poke : .nothing
    }

    /// Whether a queued block may run in a pass of `mode`.
    func hasBlocks(for mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        blocks.admitsAny(mode: mode, modeIsCommon: modeIsCommon)
    }
}
