import Synchronization

/// One mode's sources, timers and observers (R4). Guarded by the owning
/// loop's lock; the arrays are copied out (cheaply, copy-on-write) before
/// their handlers are called, so handlers may add and remove items freely.
/// Read on every pass, so, as the loop's own state, they opt out of the
/// runtime's exclusivity checks: the lock keeps their access exclusive.
final class ModeItems {
    let mode: Loop.Mode
    /// Version-0 sources by (order, sequence).
    @exclusivity(unchecked) private(set) var sources: [LoopSource] = []
    /// Version-1 sources by (order, token).
    @exclusivity(unchecked) private(set) var kernelSources: [KernelSource] = []
    /// Timers, by identity.
    @exclusivity(unchecked) private(set) var timers: [ObjectIdentifier: LoopTimer] = [:]
    /// The same timers, by next fire date.
    @exclusivity(unchecked) var timerHeap = TimerHeap()
    /// The timer `isLive` last found in `timers`, until a timer leaves: a
    /// pass that may sleep looks at the earliest timer, and finding it
    /// there costs a hash.
    @exclusivity(unchecked) private var knownMember: ObjectIdentifier?
    /// Observers by (order, sequence).
    @exclusivity(unchecked) private(set) var observers: [LoopObserver] = []
    /// The union of the observers' activities, written under the loop's
    /// lock and read without it: a pass skips a notification nobody listens
    /// to without taking the lock.
    private let observedBits = Atomic<UInt32>(0)
    /// How many version-0 sources the mode has, read the same way.
    private let sourceCount = Atomic<Int>(0)
    /// How many timers the mode has, read the same way: a pass of a mode
    /// without timers neither takes the lock for them nor reads the clock.
    private let timerCount = Atomic<Int>(0)
    /// How many version-1 sources the mode has, read the same way.
    private let kernelSourceCount = Atomic<Int>(0)

    var observedActivities: Loop.Activity { Loop.Activity(rawValue: observedBits.load(ordering: .acquiring)) }
    var hasVersion0Sources: Bool { sourceCount.load(ordering: .acquiring) > 0 }
    var hasTimers: Bool { timerCount.load(ordering: .acquiring) > 0 }

    init(mode: Loop.Mode) { self.mode = mode }

    /// R3: sources and timers keep a mode alive; observers alone do not.
    var hasSourcesOrTimers: Bool { !sources.isEmpty || !kernelSources.isEmpty || !timers.isEmpty }

    /// `hasSourcesOrTimers` read from the counts, without the lock: as
    /// current as the lock would make it for a caller that then releases it.
    var countsSourcesOrTimers: Bool {
        sourceCount.load(ordering: .acquiring) > 0 || kernelSourceCount.load(ordering: .acquiring) > 0
            || timerCount.load(ordering: .acquiring) > 0
    }

    @discardableResult
    func add(_ s: LoopSource) -> Bool {
        guard !sources.contains(where: { $0 === s }) else { return false }  // R6
        let at = sources.firstIndex { ($0.order, $0.sequence) > (s.order, s.sequence) } ?? sources.count
        sources.insert(s, at: at)
        sourceCount.store(sources.count, ordering: .releasing)
        return true
    }

    @discardableResult
    func remove(_ s: LoopSource) -> Bool {
        guard let i = sources.firstIndex(where: { $0 === s }) else { return false }
        sources.remove(at: i)
        sourceCount.store(sources.count, ordering: .releasing)
        return true
    }

    @discardableResult
    func add(_ k: KernelSource) -> Bool {
        guard !kernelSources.contains(where: { $0 === k }) else { return false }
        let at = kernelSources.firstIndex { ($0.order, $0.token) > (k.order, k.token) } ?? kernelSources.count
        kernelSources.insert(k, at: at)
        kernelSourceCount.store(kernelSources.count, ordering: .releasing)
        return true
    }

    @discardableResult
    func remove(_ k: KernelSource) -> Bool {
        guard let i = kernelSources.firstIndex(where: { $0 === k }) else { return false }
        kernelSources.remove(at: i)
        kernelSourceCount.store(kernelSources.count, ordering: .releasing)
        return true
    }

    func contains(_ k: KernelSource) -> Bool { kernelSources.contains { $0 === k } }

    @discardableResult
    func add(_ t: LoopTimer) -> Bool {
        guard timers.updateValue(t, forKey: ObjectIdentifier(t)) == nil else { return false }
        timerCount.store(timers.count, ordering: .releasing)
        if let e = t.heapEntry() { timerHeap.push(e) }
        return true
    }

    @discardableResult
    func remove(_ t: LoopTimer) -> Bool {
        guard timers.removeValue(forKey: ObjectIdentifier(t)) != nil else { return false }
        knownMember = nil
        timerCount.store(timers.count, ordering: .releasing)
        // Its heap entries go stale (isLive checks membership); rebuild the
        // heap only when stale entries dominate, so mass removal stays linear.
        if timerHeap.entries.count > 2 * timers.count + 16 { timerHeap.compact(isLive: isLive) }
        return true
    }

    func contains(_ t: LoopTimer) -> Bool { timers[ObjectIdentifier(t)] != nil }

    /// Whether a heap entry still stands for a scheduled timer of this mode.
    func isLive(_ e: TimerHeap.Entry) -> Bool {
        guard e.timer.isCurrent(e) else { return false }
        let id = ObjectIdentifier(e.timer)
        if id == knownMember { return true }
        guard timers[id] != nil else { return false }
        knownMember = id
        return true
    }

    @discardableResult
    func add(_ o: LoopObserver) -> Bool {
        guard !observers.contains(where: { $0 === o }) else { return false }
        let at = observers.firstIndex { ($0.order, $0.sequence) > (o.order, o.sequence) } ?? observers.count
        observers.insert(o, at: at)
        observedBits.store(observedActivities.union(o.activities).rawValue, ordering: .releasing)
        return true
    }

    @discardableResult
    func remove(_ o: LoopObserver) -> Bool {
        guard let i = observers.firstIndex(where: { $0 === o }) else { return false }
        observers.remove(at: i)
        observedBits.store(observers.reduce(into: Loop.Activity()) { $0.formUnion($1.activities) }.rawValue, ordering: .releasing)
        return true
    }
}

/// The items added to `.common` (R7): they join every common mode, now and later.
struct CommonItems {
    var sources: [LoopSource] = []
    var kernelSources: [KernelSource] = []
    var timers: [LoopTimer] = []
    var observers: [LoopObserver] = []
}
