import Synchronization
import Testing
@testable import LoopRuntime

/// A thread-safe log of what handlers saw, for asserting order.
final class Recorder<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    init(of: T.Type = T.self) {}
    func append(_ x: T) { items.withLock { $0.append(x) } }
    var all: [T] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// A counter shared with handlers.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.wrappingAdd(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// Waits (bounded, generously) until `condition` holds; never a pass threshold.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

#if canImport(Glibc)
import Glibc
#endif
