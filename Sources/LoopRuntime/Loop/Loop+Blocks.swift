import LoopPlatform

extension Loop {
    /// Queues `block` to run on the loop's thread during the next pass of a
    /// run in one of `modes` (nil: the common modes), waking the loop if it
    /// sleeps (R19). Blocks run in the order they were queued; a block whose
    /// modes are not running waits (R24). Any thread.
    public func perform(inModes modes: [Mode]? = nil, _ block: consuming @escaping @Sendable () -> Void) {
        // Only the inbox's mutex: a producer never waits for the loop's lock.
        // The block moves into the queue (no retain of its context here),
        // inside a struct: as an optional's payload a bare closure would be
        // re-wrapped in a heap-allocated thunk.
        var handOff = Optional(BlockBuffer.Slot(work: block))
        deliver(inbox.withLock { box in
            let wake = box.append(handOff.take()!, modes: modes)
            if !blocksQueued.load(ordering: .relaxed) { blocksQueued.store(true, ordering: .releasing) }
            return wake
        })
    }

    /// Whether a block queued for `modes` (nil: the common modes) may run in
    /// a pass of `mode`. `modeIsCommon`: `mode` is in the common set.
    @inline(__always)
    static func admits(_ modes: [Mode]?, mode: Mode, modeIsCommon: Bool) -> Bool {
        guard let modes else { return modeIsCommon }
        for m in modes where m == mode || (m == .common && modeIsCommon) { return true }
        return false
    }

    /// Whether `mode` is in the common set. Loop thread only; takes the lock
    /// only when the set grew since the last answer, or for another mode.
    func isCommonMode(_ mode: Mode) -> Bool {
        if let c = commonModeCache, c.count == commonModeCount.load(ordering: .acquiring), c.mode == mode {
            return c.isCommon
        }
        return lock.withLock { isCommonModeLocked(mode) }
    }

    /// `isCommonMode(_:)` with the lock already held. Loop thread only.
    func isCommonModeLocked(_ mode: Mode) -> Bool {
        let count = commonModes.count
        if let c = commonModeCache, c.count == count, c.mode == mode { return c.isCommon }
        let isCommon = commonModes.contains(mode)
        commonModeCache = (mode, count, isCommon)
        return isCommon
    }

    /// Whether a block waits for `mode`. Lock held; loop thread only.
    func hasBlocksLocked(for mode: Mode) -> Bool {
        let isCommon = isCommonModeLocked(mode)
        if carriedBlocks.admitsAny(mode: mode, modeIsCommon: isCommon) { return true }
        return inbox.withLock { $0.hasBlocks(for: mode, modeIsCommon: isCommon) }
    }

    /// Runs every queued block that `mode` admits, in order; the rest stay
    /// queued, ahead of blocks queued meanwhile. Blocks queued while these
    /// run wait for the next call (R23: one pass takes what was queued when
    /// it looked). Returns whether any ran.
    ///
    /// When the sleep decision of this pass took the queue already
    /// (`carriedBlocks`), that batch is the one run: it is what was queued
    /// when the pass last looked, and not looking again saves the busy
    /// pass a third round on the inbox's lock. Blocks queued since run at
    /// the next pass's step 4, in order behind it.
    @discardableResult
    func runBlocks(mode: Mode) -> Bool {
        // The whole queue is swapped out in one step for an empty buffer
        // that kept its capacity from the last drain, so producers never
        // wait while blocks run and a steady stream allocates nothing.
        var taken = BlockBuffer()
        if !carriedBlocks.isEmpty {
            swap(&taken, &carriedBlocks)
        } else {
            guard blocksQueued.load(ordering: .acquiring) else { return false }
            swap(&taken, &spareBlocks)
            // Not empty: only this thread clears the flag, with the queue.
            inbox.withLock {
                swap(&taken, &$0.blocks)
                blocksQueued.store(false, ordering: .relaxed)
            }
        }
        let isCommon = isCommonMode(mode)

        var held = BlockBuffer()
        var ran = 0
        // One callout stamp per 64 blocks instead of per block: reading the
        // clock per block costs a tenth of a tiny block's time, and a stall
        // worth reporting lasts seconds, not 64 blocks.
        let outer = calloutStart.load(ordering: .relaxed)
        while !taken.isEmpty {
            let (work, modes) = taken.take()
            if Loop.admits(modes, mode: mode, modeIsCommon: isCommon) {
                if ran & 63 == 0 { calloutStart.store(coarseMonotonicNanoseconds(), ordering: .relaxed) }
                ran &+= 1
                work()
            } else {
                held.append(work, modes: modes)
            }
        }
        calloutStart.store(outer, ordering: .relaxed)
        if spareBlocks.capacity < taken.capacity { swap(&taken, &spareBlocks) }
        if carriedBlocks.isEmpty && carriedBlocks.capacity < taken.capacity { swap(&taken, &carriedBlocks) }
        if !held.isEmpty {
            inbox.withLock {
                $0.blocks.prepend(&held)
                blocksQueued.store(true, ordering: .releasing)
            }
        }
        return ran > 0
    }

    /// Calls out to user code, stamping when it began so other threads can
    /// tell a stalled loop from a busy one (see `stalledDuration`).
    @inline(__always)
    func callout(_ body: () -> Void) {
        let outer = calloutStart.load(ordering: .relaxed)
        calloutStart.store(coarseMonotonicNanoseconds(), ordering: .relaxed)
        body()
        calloutStart.store(outer, ordering: .relaxed)
    }
}
