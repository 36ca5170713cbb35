import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A value that only the holder of its own pthread mutex may touch: the
/// guard for small hot state (a loop's inbox) that many threads hit.
///
/// The value lives behind a pointer, so accesses carry no dynamic
/// exclusivity checks (a class's stored `var` would: two runtime calls per
/// access), and the lock is a plain pthread mutex, which ThreadSanitizer
/// understands on every path (the standard library's `Mutex` on Linux lets
/// the kernel acquire a contended lock, which the sanitizer cannot see).
/// Package-wide: the daemon guards the state its threads share with it too.
package final class Locked<State: ~Copyable>: @unchecked Sendable {
    // Both allocated once and never moved. Any thread, under `mutex` for `state`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let state: UnsafeMutablePointer<State>

    package init(_ initial: consuming State) {
        mutex = .allocate(capacity: 1)
        let r = pthread_mutex_init(mutex, nil)
        precondition(r == 0, "pthread_mutex_init failed: \(r)")
        state = .allocate(capacity: 1)
        state.initialize(to: initial)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the mutex held.
    @inline(__always)
    package func withLock<T: ~Copyable, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}
