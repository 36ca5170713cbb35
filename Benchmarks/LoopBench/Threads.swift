import CLoopShims
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A plain pthread running one closure, joined by `join()`. The raw and
/// Foundation subjects run their loops on these, so no peer gets a thread
/// with different attributes from another (default stack, default policy).
final class JoinableThread: Sendable {
    /// The pthread handle; written once by `init` before any other use.
    private nonisolated(unsafe) var handle = pthread_t()

    /// Starts `body` on a new thread named `name` (truncated to 15 bytes, the
    /// kernel's limit).
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(ThreadContext(name: name, body: body)).toOpaque()
        let rc = pthread_create(&handle, nil, { raw in
            // Balances passRetained above: the thread owns its context.
            let context = Unmanaged<ThreadContext>.fromOpaque(raw!).takeRetainedValue()
            cloop_set_thread_name(context.name)  // the kernel keeps 15 bytes
            context.body()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    /// Waits for the thread's closure to return. Call once.
    func join() {
        let rc = pthread_join(handle, nil)
        precondition(rc == 0, "pthread_join failed: \(rc)")
    }
}

private final class ThreadContext: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// The kernel's id of the calling thread (what /proc/self/task/<tid> names).
func currentThreadID() -> Int32 { cloop_gettid() }

/// A one-shot "the consumer ran the last block" latch. The finishing side
/// stamps the clock *before* waking the waiter, so the time it takes to wake
/// the benchmark's main thread never counts against the subject.
final class Finish: Sendable {
    private let stamp = Atomic<UInt64>(0)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Records "now" and wakes `wait()`. Call once per latch.
    func finish() {
        stamp.store(monotonicNow(), ordering: .releasing)
        semaphore.signal()
    }

    /// Blocks until `finish()`; returns the instant it recorded.
    func wait() -> UInt64 {
        semaphore.wait()
        return stamp.load(ordering: .acquiring)
    }

    /// As `wait()`, but gives up after `seconds`; nil on time-out.
    func wait(seconds: Double) -> UInt64? {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { return nil }
        return stamp.load(ordering: .acquiring)
    }
}

/// Sleeps the calling thread for `seconds` (the main thread, between snapshots).
func sleepSeconds(_ seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}
