// The client threads: plain pthreads and a barrier to start them together.
import CLoopShims
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

/// Runs `body` on a new pthread; `join()` waits for it.
final class JoinableThread: @unchecked Sendable {
    private var handle = pthread_t()

    init(name: String, _ body: @escaping @Sendable () -> Void) throws(BenchError) {
        let box = Unmanaged.passRetained(ThreadBody(name: name, body: body)).toOpaque()
        let rc = pthread_create(&handle, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            cloop_set_thread_name(body.name)
            body.body()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            throw BenchError("pthread_create: \(errnoText(rc))")
        }
    }

    func join() { _ = pthread_join(handle, nil) }
}

private final class ThreadBody: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
