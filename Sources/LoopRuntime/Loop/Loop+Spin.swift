import LoopPlatform

extension Loop {
    /// How long the loop busy-waits for work before each sleep in the
    /// kernel; `.zero` (the default) turns it off. Any thread; read at each
    /// sleep.
    ///
    /// Waking a thread that sleeps in `epoll_wait` costs its waker an
    /// eventfd write and the sleeper a trip through the scheduler (a few µs,
    /// tens of µs when its CPU must leave an idle state). A loop that spins
    /// first is found awake by work that arrives within the spin: it sees a
    /// flag flip instead, with no system call on either side.
    ///
    /// The price is CPU time: up to this long, once per sleep. An idle loop
    /// spins once after its last event and then sleeps as usual (it still
    /// has zero wake-ups while idle); a loop woken N times a second burns up
    /// to N × this much of a core per second. The spin yields the CPU
    /// between short bursts (so a thread pinned to the same CPU still runs),
    /// stops at the next timer's fire date or the run's deadline, and looks
    /// at its descriptors every few µs; observers see it as part of the wait
    /// (between beforeWaiting and afterWaiting). Only the `.system` clock
    /// spins.
    public var spinBeforeSleeping: Duration {
        get { .nanoseconds(spinNanoseconds.load(ordering: .relaxed)) }
        set {
            let (seconds, attoseconds) = newValue.components
            let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            spinNanoseconds.store(nanoseconds, ordering: .relaxed)
        }
    }

    /// The spin of `spinBeforeSleeping`, before a sleep of a pass of
    /// `items.mode`. Returns true when the pass should handle `events` (what
    /// its descriptors had ready, possibly nothing) instead of sleeping:
    /// a waker poked it or a descriptor became ready. Returns false when the
    /// spin ran out or work was already queued: the caller then decides
    /// whether to sleep, under the lock as always.
    func spinBeforeSleep(into events: inout [ReadinessEvent], items: ModeItems, deadline: LoopInstant?) -> Bool {
        // A source changed since the epoll set was built: this pass must poll, not wait.
        if kernelSetDirty.load(ordering: .acquiring) { return false }
        let budget = UInt64(spinNanoseconds.load(ordering: .relaxed))
        var end = monotonicNanoseconds() &+ budget
        let mode = items.mode
        let isCommon = isCommonMode(mode)
        // Not past the next timer or the run's deadline: those are due then.
        if items.hasTimers {
            lock.withLock {
                if let top = items.timerHeap.liveTop(isLive: items.isLive) { end = min(end, top.deadline.nanoseconds) }
            }
        }
        if let deadline { end = min(end, deadline.nanoseconds) }

        // Announce the spin; work already queued means there is nothing to wait for.
        spinPoke.store(false, ordering: .relaxed)
        let idle = inbox.withLock { box -> Bool in
            guard box.waiting == .awake(wakeRequested: false),
                  !box.hasBlocks(for: mode, modeIsCommon: isCommon) else { return false }
            box.waiting = .spinning(wakeRequested: false)
            return true
        }
        guard idle else { return false }

        var poked = false, ready = false
        var round = 0
        spinning: while true {
            // A burst of cheap looks at the flag a waker sets.
            for _ in 0..<32 {
                if spinPoke.load(ordering: .acquiring) {
                    poked = true
                    break spinning
                }
                relaxCPU()
            }
            if monotonicNanoseconds() >= end { break }
            round &+= 1
            if round & 3 == 0 {
                backend.poll(into: &events)
                if !events.isEmpty {
                    ready = true
                    break
                }
            }
            // Sharing its CPU with the thread it waits for (pinned, or an
            // oversubscribed machine), a spinner only delays that thread:
            // offer it the CPU. With nothing else runnable here this returns
            // at once.
            yieldCPU()
        }
        inbox.withLock { box in
            if case .spinning(let requested) = box.waiting { box.waiting = .awake(wakeRequested: requested) }
        }
        // Poked: work is queued (or a wake-up asked for). This pass would
        // only poll, so poll here and skip the sleep decision.
        if poked { backend.poll(into: &events) }
        return poked || ready
    }
}
