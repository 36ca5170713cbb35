import LoopPlatform
import Dispatch
import Synchronization

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
