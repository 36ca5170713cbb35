// The client threads: plain pthreads and a barrier to start them together.
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A pthread barrier on stable memory.
final class Barrier: @unchecked Sendable {
    private let raw: UnsafeMutablePointer<pthread_barrier_t>

    init(count: Int) {
        raw = .allocate(capacity: 1)
        pthread_barrier_init(raw, nil, UInt32(count))
    }

    deinit {
        pthread_barrier_destroy(raw)
        raw.deallocate()
    }

    func wait() { _ = pthread_barrier_wait(raw) }
}

/// Runs `body` on a new thread named `name`; `join()` waits for it.
final class JoinableThread: Sendable {
    private let thread: NativeThread

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        thread = NativeThread {
            setCurrentThreadName(name)
            body()
        }
    }

    func join() { thread.join() }
}
