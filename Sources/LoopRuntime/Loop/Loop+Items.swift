import LoopPlatform

extension Loop {
    // MARK: common modes (R7)

    /// The loop's common modes, in the order they joined the set.
    public var commonModeNames: [Mode] { lock.withLock { commonModes } }

    /// Adds `mode` to the common set: every item added to `.common`, now and
    /// later, is in it too (R7).
    public func addCommonMode(_ mode: Mode) {
        precondition(mode != .common, "Loop.Mode.common is the pseudo-mode of the common set, not a mode to add to it")
        var scheduled: [LoopSource] = []
        let write = lock.withLock { () -> Bool in
            guard !commonModes.contains(mode) else { return false }
            commonModes.append(mode)
            commonModeCount.store(commonModes.count, ordering: .releasing)
            let items = modeItemsLocked(mode)
            for s in common.sources where items.add(s) { scheduled.append(s) }
            for k in common.kernelSources { items.add(k) }
            for t in common.timers { items.add(t) }
            for o in common.observers { items.add(o) }
            kernelSetDirty.store(true, ordering: .releasing)
            return wakeIfSleepingLocked()
        }
        if write { backend.wake() }
        for s in scheduled { s.scheduleHandler?(self, mode) }
    }

    /// The mode's item set, made on first use. Lock held.
    func modeItemsLocked(_ mode: Mode) -> ModeItems {
        if let items = modes[mode] { return items }
        let items = ModeItems(mode: mode)
        modes[mode] = items
        return items
    }

    /// The real modes `mode` stands for: itself, or the common set. Lock held.
    private func targetsLocked(_ mode: Mode) -> [Mode] {
        mode == .common ? commonModes : [mode]
    }

    // MARK: version-0 sources

    /// Adds a version-0 source to `mode` (or every common mode for `.common`).
    /// Adding it twice has no effect (R6). Runs its schedule callback.
    public func add(_ source: LoopSource, forMode mode: Mode) {
        guard source.isValid else { return }
        source.links.insert(self)
        var added: [Mode] = []
        let write = lock.withLock { () -> Bool in
            if mode == .common {
                guard !common.sources.contains(where: { $0 === source }) else { return false }
                common.sources.append(source)
            }
            for m in targetsLocked(mode) where modeItemsLocked(m).add(source) { added.append(m) }
            return wakeIfSleepingLocked()
        }
        if write { backend.wake() }
        for m in added { source.scheduleHandler?(self, m) }
    }

    /// Removes a version-0 source from `mode`; runs its cancel callback.
    public func remove(_ source: LoopSource, forMode mode: Mode) {
        var removed: [Mode] = []
        lock.withLock {
            if mode == .common { common.sources.removeAll { $0 === source } }
            for m in targetsLocked(mode) where modes[m]?.remove(source) == true { removed.append(m) }
        }
        for m in removed { source.cancelHandler?(self, m) }
    }

    /// Whether `source` is in `mode` (for `.common`: was added to `.common`).
    public func contains(_ source: LoopSource, inMode mode: Mode) -> Bool {
        lock.withLock {
            mode == .common ? common.sources.contains { $0 === source }
                : modes[mode]?.sources.contains { $0 === source } ?? false
        }
    }

    // MARK: version-1 sources

    func add(_ source: KernelSource, forMode mode: Mode) {
        guard source.isValid else { return }
        source.links.insert(self)
        source.retainOwner()
        let write = lock.withLock { () -> Bool in
            if mode == .common {
                guard !common.kernelSources.contains(where: { $0 === source }) else { return false }
                common.kernelSources.append(source)
            }
            for m in targetsLocked(mode) { modeItemsLocked(m).add(source) }
            kernelSetDirty.store(true, ordering: .releasing)
            return wakeIfSleepingLocked()
        }
        if write { backend.wake() }
    }

    func remove(_ source: KernelSource, forMode mode: Mode) {
        lock.withLock {
            if mode == .common { common.kernelSources.removeAll { $0 === source } }
            for m in targetsLocked(mode) { modes[m]?.remove(source) }
            // Unwatch at once if no mode holds it any more; otherwise the next
            // rebuild of the epoll set drops it if the running mode lost it.
            if !modes.values.contains(where: { $0.contains(source) }) {
                unregisterLocked(source)
                source.links.remove(self)
            }
            kernelSetDirty.store(true, ordering: .releasing)
        }
        source.releaseOwnerIfUnlinked()
    }

    func contains(_ source: KernelSource, inMode mode: Mode) -> Bool {
        lock.withLock {
            mode == .common ? common.kernelSources.contains { $0 === source } : modes[mode]?.contains(source) ?? false
        }
    }

    func kernelInterestChanged() {
        let write = lock.withLock { () -> Bool in
            kernelSetDirty.store(true, ordering: .releasing)
            return wakeIfSleepingLocked()
        }
        if write { backend.wake() }
    }

    // MARK: timers

    /// Adds a timer to `mode` (or every common mode). A timer belongs to one
    /// loop; adding it to a second loop traps.
    public func add(_ timer: LoopTimer, forMode mode: Mode) {
        guard timer.isValid else { return }
        let now = clock.now()
        precondition(timer.bind(to: self, now: now), "a LoopTimer can be added to one loop only")
        let write = lock.withLock { () -> Bool in
            if mode == .common {
                guard !common.timers.contains(where: { $0 === timer }) else { return false }
                common.timers.append(timer)
            }
            for m in targetsLocked(mode) { modeItemsLocked(m).add(timer) }
            return wakeIfSleepingLocked()
        }
        if write { backend.wake() }
    }

    /// Removes a timer from `mode`; it stays valid and can be added again.
    public func remove(_ timer: LoopTimer, forMode mode: Mode) {
        lock.withLock {
            if mode == .common { common.timers.removeAll { $0 === timer } }
            for m in targetsLocked(mode) { modes[m]?.remove(timer) }
        }
    }

    /// Whether `timer` is in `mode`.
    public func contains(_ timer: LoopTimer, inMode mode: Mode) -> Bool {
        lock.withLock {
            mode == .common ? common.timers.contains { $0 === timer } : modes[mode]?.contains(timer) ?? false
        }
    }

    /// The timer's schedule changed: index it again in every mode holding it.
    func timerRescheduled(_ timer: LoopTimer) {
        let write = lock.withLock { () -> Bool in
            timer.bumpGeneration()
            guard let entry = timer.heapEntry() else { return false }
            for items in modes.values where items.contains(timer) { items.timerHeap.push(entry) }
            return wakeIfSleepingLocked()
        }
        if write { backend.wake() }
    }

    /// The next fire date of the timers of `mode` (CFRunLoopGetNextTimerFireDate),
    /// nil if it has none.
    public func limitDate(forMode mode: Mode) -> LoopInstant? {
        lock.withLock {
            guard let items = modes[mode] else { return nil }
            return items.timerHeap.liveTop(isLive: items.isLive)?.deadline
        }
    }

    // MARK: observers

    /// Adds an observer to `mode` (or every common mode).
    public func add(_ observer: LoopObserver, forMode mode: Mode) {
        guard observer.isValid else { return }
        observer.links.insert(self)
        lock.withLock {
            if mode == .common {
                guard !common.observers.contains(where: { $0 === observer }) else { return }
                common.observers.append(observer)
            }
            for m in targetsLocked(mode) { modeItemsLocked(m).add(observer) }
        }
    }

    /// Removes an observer from `mode`.
    public func remove(_ observer: LoopObserver, forMode mode: Mode) {
        lock.withLock {
            if mode == .common { common.observers.removeAll { $0 === observer } }
            for m in targetsLocked(mode) { modes[m]?.remove(observer) }
        }
    }

    /// Whether `observer` is in `mode`.
    public func contains(_ observer: LoopObserver, inMode mode: Mode) -> Bool {
        lock.withLock {
            mode == .common ? common.observers.contains { $0 === observer }
                : modes[mode]?.observers.contains { $0 === observer } ?? false
        }
    }

    // MARK: invalidation (R11, R15)

    func detach(_ source: LoopSource) {
        var removed: [Mode] = []
        lock.withLock {
            common.sources.removeAll { $0 === source }
            for (m, items) in modes where items.remove(source) { removed.append(m) }
        }
        for m in removed { source.cancelHandler?(self, m) }
    }

    func detach(_ source: KernelSource) {
        lock.withLock {
            common.kernelSources.removeAll { $0 === source }
            for items in modes.values { items.remove(source) }
            unregisterLocked(source)
            kernelSetDirty.store(true, ordering: .releasing)
        }
    }

    func detach(_ timer: LoopTimer) {
        lock.withLock {
            common.timers.removeAll { $0 === timer }
            for items in modes.values { items.remove(timer) }
        }
    }

    func detach(_ observer: LoopObserver) {
        lock.withLock {
            common.observers.removeAll { $0 === observer }
            for items in modes.values { items.remove(observer) }
        }
    }

    /// Takes `source` out of the kernel's set now. Lock held.
    func unregisterLocked(_ source: KernelSource) {
        lastReady = nil
        if registered.removeValue(forKey: source.token) != nil { backend.unwatch(source.fd) }
    }

    /// The thread exited: drop every item, so sources release their loops and
    /// their descriptors can close.
    func tearDown() {
        let (sources, kernel, timers, observers) = lock.withLock {
            () -> ([LoopSource], [KernelSource], [LoopTimer], [LoopObserver]) in
            var s: [LoopSource] = [], k: [KernelSource] = [], t: [LoopTimer] = [], o: [LoopObserver] = []
            for items in modes.values {
                s += items.sources; k += items.kernelSources; t += items.timers.values; o += items.observers
            }
            for source in k { unregisterLocked(source) }
            modes.removeAll()
            common = CommonItems()
            return (s, k, t, o)
        }
        // Dropped outside both locks: releasing a block may run a deinit.
        var unrun = BlockBuffer()
        inbox.withLock {
            swap(&unrun, &$0.blocks)
            blocksQueued.store(false, ordering: .relaxed)
        }
        _ = consume unrun
        for s in sources { s.links.remove(self) }
        for k in kernel {
            k.links.remove(self)
            k.releaseOwnerIfUnlinked()
        }
        for o in observers { o.links.remove(self) }
        for t in timers { t.invalidate() }
    }
}
