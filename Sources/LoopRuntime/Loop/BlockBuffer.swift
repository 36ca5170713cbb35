/// Queued blocks in submission order, owned by whoever holds the buffer:
/// the inbox while producers append, the loop thread while it runs them.
///
/// A block is moved in on `append` and moved out on `take`, so queueing and
/// running one costs no reference counting beyond the closure's own release
/// after it ran, and a drained buffer keeps its capacity for the next batch.
/// Most blocks are for the common modes, so the slots hold only closures
/// (16 bytes, a quarter of a cache line); the few that name modes are listed
/// beside them by position.
struct BlockBuffer: ~Copyable {
    typealias Work = @Sendable () -> Void

    /// A closure held in a struct. Stored bare in generic storage (a
    /// pointer's pointee, an optional's payload) a function value is
    /// re-wrapped in a heap-allocated thunk on the way in and out.
    struct Slot {
        let work: Work
    }

    /// The slots; `start..<start + count` are initialized. nil until the first append.
    private var slots: UnsafeMutablePointer<Slot>?
    private(set) var capacity = 0
    /// Initialized slots, minus `start` (slots already taken).
    private(set) var count = 0
    /// Slots before it were moved out by `take()`.
    private var start = 0
    /// The mode lists of blocks queued with `modes`, ascending by position;
    /// a block not listed is for the common modes. Entries before
    /// `nextRestriction` belong to blocks already taken.
    private var restrictions: [(position: Int, modes: [Loop.Mode])] = []
    private var nextRestriction = 0

    init() {}

    deinit {
        if let slots {
            (slots + start).deinitialize(count: count)
            slots.deallocate()
        }
    }

    var isEmpty: Bool { count == 0 }

    /// Queues `work` at the end. `modes`: nil for the common modes.
    @inline(__always)
    mutating func append(_ work: consuming @escaping Work, modes: [Loop.Mode]?) {
        append(Slot(work: work), modes: modes)
    }

    /// Queues a block already in its slot at the end.
    @inline(__always)
    mutating func append(_ slot: consuming Slot, modes: [Loop.Mode]?) {
        if start + count == capacity { grow() }  // moves the live slots to the front
        let position = start + count
        (slots! + position).initialize(to: slot)
        count += 1
        if let modes { restrictions.append((position, modes)) }
    }

    /// Moves the oldest block out with its modes. The buffer must not be empty.
    @inline(__always)
    mutating func take() -> (work: Work, modes: [Loop.Mode]?) {
        let position = start
        let work = (slots! + position).move().work
        start += 1
        count -= 1
        var modes: [Loop.Mode]? = nil
        if nextRestriction < restrictions.count, restrictions[nextRestriction].position == position {
            modes = restrictions[nextRestriction].modes
            nextRestriction += 1
        }
        if count == 0 {
            start = 0
            if !restrictions.isEmpty {
                restrictions.removeAll(keepingCapacity: true)
                nextRestriction = 0
            }
        }
        return (work, modes)
    }

    /// Puts every block of `front` ahead of this buffer's, leaving `front` empty.
    mutating func prepend(_ front: inout BlockBuffer) {
        guard !front.isEmpty else { return }
        var merged = BlockBuffer()
        merged.reserve(front.count + count)
        while !front.isEmpty { let b = front.take(); merged.append(b.work, modes: b.modes) }
        while !isEmpty { let b = take(); merged.append(b.work, modes: b.modes) }
        swap(&self, &merged)
    }

    /// How many queued blocks a pass of `mode` would run.
    func admittedCount(mode: Loop.Mode, modeIsCommon: Bool) -> Int {
        let pending = restrictions[nextRestriction...]
        let unrestricted = modeIsCommon ? count - pending.count : 0
        return unrestricted + pending.count { Loop.admits($0.modes, mode: mode, modeIsCommon: modeIsCommon) }
    }

    /// Whether a pass of `mode` would run any queued block.
    func admitsAny(mode: Loop.Mode, modeIsCommon: Bool) -> Bool {
        if count == 0 { return false }
        let pending = restrictions[nextRestriction...]
        if modeIsCommon && pending.count < count { return true }
        return pending.contains { Loop.admits($0.modes, mode: mode, modeIsCommon: modeIsCommon) }
    }

    private mutating func reserve(_ minimum: Int) {
        while capacity - start < minimum { grow() }
    }

    /// Doubles the capacity, moving the live slots to the front of the new storage.
    private mutating func grow() {
        let newCapacity = Swift.max(64, capacity * 2)
        let fresh = UnsafeMutablePointer<Slot>.allocate(capacity: newCapacity)
        if let slots {
            fresh.moveInitialize(from: slots + start, count: count)
            slots.deallocate()
        }
        if start != 0 {
            restrictions.removeFirst(nextRestriction)
            nextRestriction = 0
            for i in restrictions.indices { restrictions[i].position -= start }
            start = 0
        }
        slots = fresh
        capacity = newCapacity
    }
}
