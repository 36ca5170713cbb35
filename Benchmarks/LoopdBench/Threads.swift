// The client threads: plain pthreads, started together by a `ThreadBarrier`.
import LoopPlatform

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
