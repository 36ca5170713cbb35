import LoopPlatform
import Synchronization

/// Hands out process-wide sequence numbers: items added later sort after
/// earlier ones of the same order or deadline.
let itemSequence = Atomic<UInt64>(1)

@inline(__always)
func nextItemSequence() -> UInt64 {
    itemSequence.wrappingAdd(1, ordering: .relaxed).oldValue
}

/// The loops an item (source, timer or observer) has been added to, held
/// weakly: a loop owns its items, never the reverse. Any thread.
final class ItemLinks: @unchecked Sendable {
    private struct WeakLoop { weak var loop: Loop? }
    private let lock = Lock()
    private var loops: [WeakLoop] = []  // guarded by lock

    func insert(_ loop: Loop) {
        lock.withLock {
            loops.removeAll { $0.loop == nil }
            if !loops.contains(where: { $0.loop === loop }) { loops.append(WeakLoop(loop: loop)) }
        }
    }

    func remove(_ loop: Loop) {
        lock.withLock { loops.removeAll { $0.loop == nil || $0.loop === loop } }
    }

    /// Whether no live loop holds the item.
    var isEmpty: Bool {
        lock.withLock { !loops.contains { $0.loop != nil } }
    }

    /// The loops holding the item, without clearing the list.
    func snapshot() -> [Loop] {
        lock.withLock { loops.compactMap(\.loop) }
    }

    /// Every loop still alive that holds the item; clears the list.
    func takeAll() -> [Loop] {
        lock.withLock {
            let alive = loops.compactMap(\.loop)
            loops.removeAll()
            return alive
        }
    }
}

/// A weak reference a source's kernel handler uses to reach its owner. Set
/// once, in the owner's init, before the source can be added to any loop, so
/// no thread can read it while it is written.
final class WeakOwner<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
}
