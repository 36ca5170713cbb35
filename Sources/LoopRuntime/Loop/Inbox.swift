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

    /// Queues a block; returns whether the caller must write the eventfd
    /// (after unlocking): only the first producer to find the loop asleep does.
    @inline(__always)
    mutating func append(_ slot: consuming BlockBuffer.Slot, modes: [Loop.Mode]?) -> Bool {
        blocks.append(slot, modes: modes)
        return signalIfSleeping()
    }

    /// A wake-up for an asleep loop: returns whether the caller must write
    /// the eventfd, which happens at most once per sleep.
    @inline(__always)
    mutating func signalIfSleeping() -> Bool {
        guard sleeping, !wakeSignalled else { return false }
        wakeSignalled = true
        return true
    }

    /// `wakeUp()`: an asleep loop is signalled; an awake one will not block
    /// in its next wait. Returns whether the caller must write the eventfd.
    mutating func requestWake() -> Bool {
        if sleeping { return signalIfSleeping() }
        wakeRequested = true
        return false
    }

    /// Whether a queued block may run in a pass of `mode`.
    func hasBlocks(for mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        blocks.admitsAny(mode: mode, modeIsCommon: modeIsCommon)
    }
}
