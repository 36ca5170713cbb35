import LoopPlatform

extension Loop {
    /// Runs the loop in `mode` until it is stopped, the timeout passes, the
    /// mode has no sources and no timers left, or (with
    /// `returnAfterSourceHandled`) a source was handled: then a pass fires
    /// at most one version-0 source, the signalled one of lowest order, and
    /// at most one version-1 source. Only the loop's own thread may run it;
    /// runs nest (R21), and a `stop()` ends only the run in progress when it
    /// was called (R20).
    ///
    /// The pass order is R17's: entry; then each pass beforeTimers,
    /// beforeSources, blocks, signalled version-0 sources, blocks again,
    /// beforeWaiting, sleep, afterWaiting, due timers and ready version-1
    /// sources, blocks; exit when the run ends.
    @discardableResult
    public func run(mode: Mode = .default, timeout: Duration? = nil,
                    returnAfterSourceHandled: Bool = false) -> RunResult {
        precondition(LoopRegistry.shared.currentLoop() === self, "a Loop runs only on its own thread (R2)")
        precondition(mode != .common, "run a real mode; .common only names the common set")
        let clock = self.clock
        let start = clock.now()
        let deadline = timeout.map { start.advanced(by: $0) }

        lock.lock()
        let items: ModeItems
        if servesMainQueueLocked(in: mode) {
            items = modeItemsLocked(mode)  // R3, R27: the main queue keeps this run alive
        } else if let known = modes[mode], known.hasSourcesOrTimers || hasBlocksLocked(for: mode) {
            items = known
        } else {
            lock.unlock()
            return .finished  // R3: nothing to wait for; entry is not sent
        }
        let outerMode = runningMode
        runningMode = mode
        runStops.append(false)  // R20: this run's own stop flag
        lock.unlock()
        defer {
            lock.withLock {
                if runStops.removeLast() { stopMarks.subtract(1, ordering: .releasing) }
                runningMode = outerMode
            }
        }

        notify(.entry, items)
        let result = runPasses(items, clock: clock, start: start, deadline: deadline,
                               returnAfterSourceHandled: returnAfterSourceHandled)
        notify(.exit, items)
        return result
    }

    /// Runs the default mode until stopped or finished (R20).
    public func run() {
        run(mode: .default, timeout: nil)
    }

    /// The passes of one run. Each pass reads its clock once, as step 9
    /// begins (after the wait and its afterWaiting notification): firing the
    /// due timers and the next pass's decision whether it may block use that
    /// instant (the run's first pass uses the one read at entry). Only a
    /// repeating timer reads the clock again, after its handler, to find its
    /// next grid point (R13), and a run with a timeout reads it as the pass
    /// ends, for step 10. A pass that nothing times (no timeout, no timers,
    /// the system clock) reads nothing.
    private func runPasses(_ items: ModeItems, clock: LoopClock, start: LoopInstant, deadline: LoopInstant?,
                           returnAfterSourceHandled: Bool) -> RunResult {
        let mode = items.mode
        var now = start
        let clockIsManual = if case .manual = clock { true } else { false }
        if lock.withLock({ isStoppedLocked }) { return .stopped }  // stopped by an entry observer
        var events: [ReadinessEvent] = []
        events.reserveCapacity(16)
        while true {
            lastTurnStamp.store(coarseMonotonicNanoseconds(), ordering: .relaxed)
            notify(.beforeTimers, items)
            notify(.beforeSources, items)
            runBlocks(mode: mode)
            var handledSource = fireSignalledSources(items, onlyOne: returnAfterSourceHandled)
            if handledSource { runBlocks(mode: mode) }

            rebuildEpollSetIfNeeded(items)
            let mustNotBlock = handledSource || deadline.map { now >= $0 } ?? false
            let watchesWaiting = observes([.beforeWaiting, .afterWaiting], items)
            events.removeAllKeepingCapacity()

            // Step 5: a version-1 source already ready is handled at once,
            // without the waiting notifications. Only worth a look when
            // someone would see the difference.
            var sourceAlreadyReady = false
            if !mustNotBlock && watchesWaiting {
                backend.poll(into: &events)
                sourceAlreadyReady = events.contains { $0.token > Loop.mainQueueToken }
            }
            let notifyWaiting = !mustNotBlock && !sourceAlreadyReady
            if !sourceAlreadyReady {
                if notifyWaiting { notify(.beforeWaiting, items) }
                sleep(into: &events, items: items, clock: clock, now: now, deadline: deadline, poll: mustNotBlock)
                if notifyWaiting { notify(.afterWaiting, items) }
            }

            // Step 9: what woke us, at this pass's instant. A stale instant
            // is never looked at: without timers or a manual clock nothing
            // below reads it but the timeout, which reads its own.
            if clockIsManual || items.hasTimers { now = clock.now() }
            fireDueTimers(items, clock: clock, now: now)
            if handleKernelEvents(events, items: items, single: returnAfterSourceHandled) { handledSource = true }
            runBlocks(mode: mode)

            if handledSource && returnAfterSourceHandled { return .handledSource }
            // The timeout as the pass ends, as CF checks it: handlers of this
            // pass that ran past it end the run now, not after another pass.
            if let deadline {
                now = clock.now()
                if now >= deadline { return .timedOut }
            }
            // Nothing stopped, and sources or timers keep the mode alive
            // (R3, R20): the next pass, without the lock.
            if stopMarks.load(ordering: .acquiring) == 0 && items.countsSourcesOrTimers { continue }
            let (stopped, empty) = lock.withLock { () -> (Bool, Bool) in
                let empty = !items.hasSourcesOrTimers && !hasBlocksLocked(for: mode) && !servesMainQueueLocked(in: mode)
                return (isStoppedLocked, empty)
            }
            if stopped { return .stopped }
            if empty { return .finished }
        }
    }

    // MARK: steps

    /// Whether `stop()` marked the innermost run, the one this thread is in (R20).
    private var isStoppedLocked: Bool { runStops.last ?? false }

    private func observes(_ activities: Activity, _ items: ModeItems) -> Bool {
        !items.observedActivities.isDisjoint(with: activities)
    }

    /// Calls the mode's observers of `activity`, by order, but none whose
    /// handler is running already, further out: like Core Foundation, a run
    /// nested in an observer's handler does not call that observer (R16).
    func notify(_ activity: Activity, _ items: ModeItems) {
        guard items.observedActivities.contains(activity) else { return }
        let observers = lock.withLock { items.observers }
        for o in observers where o.activities.contains(activity) && o.isValid {
            let id = ObjectIdentifier(o)
            if id == firingObserver || (!outerFiringObservers.isEmpty && outerFiringObservers.contains(id)) { continue }
            let outer = firingObserver
            if let outer { outerFiringObservers.append(outer) }
            firingObserver = id
            callout { o.handler(o, activity) }
            firingObserver = outer
            if outer != nil { outerFiringObservers.removeLast() }
            if !o.repeats { o.invalidate() }
        }
    }

    /// Fires the signalled version-0 sources of the mode, lower order first
    /// (R8, R10); with `onlyOne`, for a run that returns after a handled
    /// source, just the first of them: the others stay signalled for a later
    /// run (R17 step 4).
    private func fireSignalledSources(_ items: ModeItems, onlyOne: Bool) -> Bool {
        guard items.hasVersion0Sources else { return false }
        let sources = lock.withLock { items.sources }
        var fired = false
        for s in sources where s.isValid && s.consumeSignal() {
            fired = true
            callout(s.performHandler)
            if onlyOne { break }
        }
        return fired
    }

    /// Sleeps until a descriptor is ready, the next timer wake-up, the run's
    /// deadline, or a wake-up; with `poll`, only looks. `now` is the pass's
    /// instant: with a manual clock, an advance since it was read has asked
    /// for a wake-up, so this pass will not block on an older instant.
    private func sleep(into events: inout [ReadinessEvent], items: ModeItems, clock: LoopClock,
                       now: LoopInstant, deadline: LoopInstant?, poll: Bool) {
        if !poll, spinNanoseconds.load(ordering: .relaxed) > 0, case .system = clock,
           spinBeforeSleep(into: &events, items: items, deadline: deadline) {
            return  // descriptors became ready while spinning: handle them, no sleep
        }
        let plan = decideWait(items: items, clock: clock, now: now, deadline: deadline, poll: poll)
        wait(plan, clock: clock, into: &events)
    }

    /// Gathers the facts of the sleep decision under the lock, takes the
    /// decision (`WaitFacts.plan`) and, when it is to block, marks the loop
    /// asleep in the inbox before the lock is released.
    private func decideWait(items: ModeItems, clock: LoopClock, now: LoopInstant, deadline: LoopInstant?,
                            poll: Bool) -> WaitPlan {
        lock.lock()
        defer { lock.unlock() }
        let mode = items.mode
        var facts = WaitFacts(now: now)
        facts.clockIsManual = if case .manual = clock { true } else { false }
        facts.mustNotBlock = poll
        facts.stopped = isStoppedLocked
        // A version-1 source added (or re-aimed) since this pass rebuilt the
        // epoll set is not in it yet: poll, so the next pass watches it.
        facts.kernelSetChanged = kernelSetDirty.load(ordering: .acquiring)
        if facts.mayBlockBeforeTimers {
            facts.wake = items.timerHeap.wake(isLive: items.isLive, runDeadline: deadline)
        }
        // Blocks the inbox holds when the loop does not block are taken for
        // step 10 while the lock is held anyway.
        let isCommon = isCommonModeLocked(mode)
        let carry = carriedBlocks.isEmpty
        return inbox.withLock { box in
            facts.blocksQueued = box.hasBlocks(for: mode, modeIsCommon: isCommon)
            facts.wakeRequested = box.takeWakeRequest()
            let plan = facts.plan
            if case .block = plan {
                box.waiting = .asleep(signalled: false)
            } else if facts.blocksQueued && carry {
                swap(&carriedBlocks, &box.blocks)
                blocksQueued.store(false, ordering: .relaxed)
            }
            return plan
        }
    }

    /// Carries out a sleep decision through the backend.
    private func wait(_ plan: WaitPlan, clock: LoopClock, into events: inout [ReadinessEvent]) {
        guard case .block(let wake) = plan else {
            backend.poll(into: &events)
            return
        }
        waitingFlag.store(true, ordering: .releasing)
        backend.wait(until: wake, on: clock, into: &events)
        waitingFlag.store(false, ordering: .releasing)
        wakeUps.wrappingAdd(1, ordering: .relaxed)
        inbox.withLock { $0.waiting = .awake(wakeRequested: false) }
        // The wake-up eventfd is edge-triggered and never drained: a write
        // that lands after the loop woke for another reason (a waker writes
        // after releasing the inbox) costs one early return from a later
        // wait, never a stream of them.
    }

    /// Fires the mode's timers due at the pass's instant `now`, earliest
    /// first; equal deadlines in creation order. Timers that come due while
    /// these run wait for the next pass (R12). A mode without timers costs
    /// no lock.
    private func fireDueTimers(_ items: ModeItems, clock: LoopClock, now: LoopInstant) {
        guard items.hasTimers else { return }
        // The loop's spare list, taken (a nested run in a handler finds it
        // empty and makes its own) and handed back emptied: no allocation
        // per pass.
        var due: [TimerHeap.Entry] = []
        swap(&due, &spareDueTimers)
        defer {
            due.removeAllKeepingCapacity()
            swap(&due, &spareDueTimers)
        }
        lock.withLock {
            // The top's deadline alone tells whether anything is due, so a
            // pass with no timer due asks nothing of the timer table. A
            // stale entry that is due is dropped; one not due stays.
            while let deadline = items.timerHeap.topDeadline, deadline <= now {
                let top = items.timerHeap.pop()!
                if items.isLive(top) { due.append(top) }
            }
        }
        for entry in due {
            let timer = entry.timer
            guard lock.withLock({ items.contains(timer) }), timer.beginFiring(entry) else { continue }
            callout { timer.handler(timer) }
            // The next grid point is the first after the handler returns, so
            // a handler that overran does not fire again to catch up (R13):
            // the one read of the clock that the pass's instant cannot serve.
            if timer.advanceAfterFiring(firedDate: entry.deadline, now: { clock.now() }) {
                lock.withLock {
                    guard let next = timer.heapEntry() else { return }
                    for m in modes.values where m.contains(timer) { m.timerHeap.push(next) }
                }
            } else if !timer.isValid {
                detach(timer)  // a spent one-shot timer (R15)
            }
        }
    }

    /// Handles ready version-1 sources, lower order first (R10); events of
    /// sources no longer registered are dropped. Returns whether any ran.
    private func handleKernelEvents(_ events: [ReadinessEvent], items: ModeItems, single: Bool) -> Bool {
        guard events.contains(where: { $0.token >= Loop.mainQueueToken }) else { return false }
        // The loop's spare list, as `fireDueTimers` takes its own.
        var ready: [(KernelSource, ReadinessEvent)] = []
        swap(&ready, &spareReadySources)
        defer {
            ready.removeAllKeepingCapacity()
            swap(&ready, &spareReadySources)
        }
        var mainQueueReady = false
        lock.withLock {
            for e in events {
                if e.token == Loop.mainQueueToken { mainQueueReady = true; continue }
                guard e.token > Loop.mainQueueToken else { continue }
                if let last = lastReady, last.token == e.token {
                    ready.append((last.source, e))
                } else if let reg = registered[e.token] {
                    lastReady = (e.token, reg.source)
                    ready.append((reg.source, e))
                }
            }
        }
        var handled = false
        if ready.count > 1 { ready.sort { ($0.0.order, $0.0.token) < ($1.0.order, $1.0.token) } }
        for (i, (source, event)) in ready.enumerated() {
            // A handler may have removed a later source; none has run before the first.
            guard source.isValid, i == 0 || lock.withLock({ registered[source.token] != nil }) else { continue }
            handled = true
            callout { source.handler(event, single) }
            if single { break }
        }
        if mainQueueReady && !(single && handled) {
            serveMainQueue()
            handled = true
        }
        return handled
    }

    /// Brings the epoll set in line with the running mode's version-1
    /// sources (and, for the main loop in a common mode, the Dispatch main
    /// queue, R27). Sources of other modes are unwatched, so their readiness
    /// waits in the kernel until a run of their mode (R5).
    private func rebuildEpollSetIfNeeded(_ items: ModeItems) {
        guard kernelSetDirty.load(ordering: .acquiring) || registeredMode != items.mode else { return }
        lock.lock()
        defer { lock.unlock() }
        kernelSetDirty.store(false, ordering: .relaxed)
        registeredMode = items.mode
        lastReady = nil
        var wanted: [UInt64: (source: KernelSource, interest: IOInterest)] = [:]
        for s in items.kernelSources where s.isValid {
            let interest = s.interest
            if !interest.isEmpty { wanted[s.token] = (s, interest) }
        }
        for (token, reg) in registered where wanted[token] == nil {
            backend.unwatch(reg.source.fd)
            registered[token] = nil
        }
        for (token, want) in wanted {
            do {
                if let have = registered[token] {
                    if have.interest != want.interest {
                        try backend.rewatch(want.source.fd, interest: want.interest, token: token)
                    }
                } else {
                    try backend.watch(want.source.fd, interest: want.interest, token: token)
                }
                registered[token] = want
            } catch {
                // A descriptor epoll refuses (a regular file, say) can never
                // become ready: leave it unwatched rather than spin.
                registered[token] = nil
            }
        }
        let wantMainQueue = servesMainQueueLocked(in: items.mode)
        if wantMainQueue != mainQueueRegistered {
            setMainQueueWatched(wantMainQueue)
        }
    }
}
