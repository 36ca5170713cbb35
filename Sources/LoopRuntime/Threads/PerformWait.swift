import LoopPlatform
import Synchronization

/// One `LoopThread.perform(waitUntilDone: true)` in flight. The caller sleeps
/// on it until the block has run on the thread, or until the thread has
/// exited without running it (the block was queued as the thread stopped,
/// or for a mode the thread never ran again): a waiting caller is never left
/// behind by a thread that is gone.
final class PerformWait: @unchecked Sendable {
    private enum Outcome: UInt8 { case pending, ran, abandoned }

    /// Registration key in `ThreadControl.waits`; set once, before sharing.
    let key: UInt64
    private let latch = Latch()
    private let outcome = Atomic<UInt8>(Outcome.pending.rawValue)  // any thread; the first finish wins

    init(key: UInt64) { self.key = key }

    /// Records how it ended and wakes the caller; later calls change nothing.
    func finish(ran: Bool) {
        let value = ran ? Outcome.ran : Outcome.abandoned
        if outcome.compareExchange(expected: Outcome.pending.rawValue, desired: value.rawValue,
                                   ordering: .acquiringAndReleasing).exchanged {
            latch.open()
        }
    }

    /// Blocks until `finish`; true if the block ran.
    func wait() -> Bool {
        latch.wait()
        return outcome.load(ordering: .acquiring) == Outcome.ran.rawValue
    }
}
