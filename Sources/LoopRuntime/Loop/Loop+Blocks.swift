extension Loop {
    /// Queues `block` to run on the loop's thread during the next pass of a
    /// run in one of `modes` (nil: the common modes), waking the loop if it
    /// sleeps (R19). Blocks run in the order they were queued; a block whose
    /// modes are not running waits (R24). Any thread.
    public func perform(inModes modes: [Mode]? = nil, _ block: @escaping @Sendable () -> Void) {
        lock.lock()
        blocks.append(QueuedBlock(modes: modes, work: block))
        let write = sleeping && !wakeSignalled
        if write { wakeSignalled = true }
        lock.unlock()
        if write { wakeFD.signal() }
    }

    /// Whether `block` may run in a pass of `mode`. `modeIsCommon`: `mode` is
    /// in the common set.
    @inline(__always)
    static func admits(_ block: QueuedBlock, mode: Mode, modeIsCommon: Bool) -> Bool {
        guard let modes = block.modes else { return modeIsCommon }
        for m in modes where m == mode || (m == .common && modeIsCommon) { return true }
        return false
    }

    /// Whether a block waits for `mode`. Lock held.
    func hasBlocksLocked(for mode: Mode) -> Bool {
        guard !blocks.isEmpty else { return false }
        let isCommon = commonModes.contains(mode)
        return blocks.contains { Loop.admits($0, mode: mode, modeIsCommon: isCommon) }
    }

    /// Runs every queued block that `mode` admits, in order; the rest stay
    /// queued, ahead of blocks queued meanwhile. Returns whether any ran.
    @discardableResult
    func runBlocks(mode: Mode) -> Bool {
        var taken: [QueuedBlock] = []
        swap(&taken, &spareBlocks)
        lock.lock()
        if blocks.isEmpty {
            lock.unlock()
            swap(&taken, &spareBlocks)
            return false
        }
        swap(&taken, &blocks)
        let isCommon = commonModes.contains(mode)
        lock.unlock()

        var held: [QueuedBlock] = []
        var ran = 0
        // One callout stamp per 64 blocks instead of per block: reading the
        // clock per block costs a tenth of a tiny block's time, and a stall
        // worth reporting lasts seconds, not 64 blocks.
        let outer = calloutStart.load(ordering: .relaxed)
        for block in taken {
            if Loop.admits(block, mode: mode, modeIsCommon: isCommon) {
                if ran & 63 == 0 { calloutStart.store(coarseMonotonicNanoseconds(), ordering: .relaxed) }
                ran &+= 1
                block.work()
            } else {
                held.append(block)
            }
        }
        calloutStart.store(outer, ordering: .relaxed)
        taken.removeAll(keepingCapacity: true)
        if spareBlocks.capacity < taken.capacity { spareBlocks = taken }
        if !held.isEmpty {
            lock.withLock { blocks.insert(contentsOf: held, at: 0) }
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
