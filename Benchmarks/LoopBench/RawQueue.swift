import LoopPlatform
import Synchronization

/// The raw limit: the least machinery a cross-thread "run this block on that
/// thread" can have on Linux — a mutex-guarded array, an eventfd written only
/// by the producer that flips the "wake-up pending" flag, and a consumer
/// thread blocked in `epoll_wait` that swaps the whole array out under the
/// lock and runs it. No modes, no observers, no timers: whatever a run loop
/// adds on top of this is its overhead.
final class RawLoopThread: Sendable {
    private let core: RawLoopCore
    private let thread: NativeThread

    init(name: String) {
        let core = RawLoopCore()
        self.core = core
        thread = NativeThread(name: name) { core.run() }
    }

    /// Queues `block` to run on the consumer thread; any thread.
    @inline(__always)
    func execute(_ block: @escaping @Sendable () -> Void) { core.execute(block) }

    /// How many times `epoll_wait` has returned (the thread's wake-ups).
    var passes: Int { core.passes.load(ordering: .relaxed) }

    /// Runs what is queued, ends the thread and joins it (the descriptors
    /// close when the queue is released).
    func stop() {
        core.requestStop()
        thread.join()
    }
}

private final class RawLoopCore: Sendable {
    private struct Queue {
        var blocks: [@Sendable () -> Void] = []
        /// Set by the producer that wrote the eventfd; cleared by the consumer
        /// when it takes the batch. Coalesces wake-ups.
        var wakePending = false
        var stopping = false
    }

    /// Guarded by its own lock; touched by producers and the consumer.
    private let queue = Mutex(Queue())
    /// Counted by the consumer thread, read by anyone.
    let passes = Atomic<Int>(0)
    let eventFD: EventFD
    let epoll: Epoll

    init() {
        do throws(PlatformError) {
            eventFD = try EventFD()
            epoll = try Epoll()
            try epoll.add(eventFD.fd, interest: .readable, token: 0)
        } catch {
            fatalError("the raw queue cannot start: \(error)")
        }
    }

    @inline(__always)
    func execute(_ block: @escaping @Sendable () -> Void) {
        let mustWake = queue.withLock { q in
            q.blocks.append(block)
            if q.wakePending { return false }
            q.wakePending = true
            return true
        }
        if mustWake { signal() }
    }

    func requestStop() {
        let mustWake = queue.withLock { q in
            q.stopping = true
            defer { q.wakePending = true }
            return !q.wakePending
        }
        if mustWake { signal() }
    }

    private func signal() { eventFD.signal() }

    /// The consumer: sleep in epoll, take the whole batch, run it.
    func run() {
        var batch: [@Sendable () -> Void] = []
        while true {
            do {
                // An interrupted wait reports no events; go round again.
                guard try epoll.wait(timeoutMilliseconds: -1, { _ in }) > 0 else { continue }
            } catch {
                fatalError("epoll_wait failed: \(error)")
            }
            passes.add(1, ordering: .relaxed)
            eventFD.drain()  // reset before taking the batch, so no wake-up is lost
            let stopping = queue.withLock { q in
                swap(&q.blocks, &batch)
                q.wakePending = false
                return q.stopping
            }
            for block in batch { block() }
            batch.removeAll(keepingCapacity: true)
            if stopping { return }
        }
    }
}
