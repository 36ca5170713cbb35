import LoopPlatform
import Dispatch
import Synchronization

/// A plain pthread running one closure, joined by `join()`. The raw and
/// Foundation subjects run their loops on these, so no peer gets a thread
/// with different attributes from another (default stack, default policy).
final class JoinableThread: Sendable {
    private let thread: NativeThread

    /// Starts `body` on a new thread named `name` (truncated to 15 bytes, the
    /// kernel's limit).
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        thread = NativeThread {
            setCurrentThreadName(name)
            body()
        }
    }

    /// Waits for the thread's closure to return. Call once.
    func join() { thread.join() }
}

/// A one-shot "the consumer ran the last block" latch. The finishing side
/// stamps the clock *before* waking the waiter, so the time it takes to wake
/// the benchmark's main thread never counts against the subject.
final class Finish: Sendable {
    private let stamp = Atomic<UInt64>(0)
    private let semaphore = DispatchSemaphore(value: 0)

    /// Records "now" and wakes `wait()`. Call once per latch.
    func finish() {
        stamp.store(monotonicNanoseconds(), ordering: .releasing)
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
    blockThread(milliseconds: Int64(seconds * 1000))
}
