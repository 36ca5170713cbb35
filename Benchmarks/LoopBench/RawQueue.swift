import CLoopShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The raw limit: the least machinery a cross-thread "run this block on that
/// thread" can have on Linux — a mutex-guarded array, an eventfd written only
/// by the producer that flips the "wake-up pending" flag, and a consumer
/// thread blocked in `epoll_wait` that swaps the whole array out under the
/// lock and runs it. No modes, no observers, no timers: whatever a run loop
/// adds on top of this is its overhead.
final class RawLoopThread: Sendable {
    private let core: RawLoopCore
    private let thread: JoinableThread

    init(name: String) {
        let core = RawLoopCore()
        self.core = core
        thread = JoinableThread(name: name) { core.run() }
    }

    /// Queues `block` to run on the consumer thread; any thread.
    @inline(__always)
    func execute(_ block: @escaping @Sendable () -> Void) { core.execute(block) }

    /// How many times `epoll_wait` has returned (the thread's wake-ups).
    var passes: Int { core.passes.load(ordering: .relaxed) }

    /// Runs what is queued, ends the thread, joins it and closes its fds.
    func stop() {
        core.requestStop()
        thread.join()
        core.close()
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
    let eventFD: Int32
    let epollFD: Int32

    init() {
        eventFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(eventFD >= 0 && epollFD >= 0, "eventfd/epoll_create1 failed: errno \(errno)")
        let rc = cloop_epoll_ctl(epollFD, EPOLL_CTL_ADD, eventFD, EPOLLIN.rawValue, 0)
        precondition(rc == 0, "epoll_ctl failed: errno \(errno)")
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

    private func signal() {
        var one: UInt64 = 1
        while write(eventFD, &one, 8) == -1 && errno == EINTR {}
    }

    /// The consumer: sleep in epoll, take the whole batch, run it.
    func run() {
        var events = [cloop_event](repeating: cloop_event(), count: 4)
        var batch: [@Sendable () -> Void] = []
        while true {
            let n = cloop_epoll_wait(epollFD, &events, Int32(events.count), -1)
            if n < 0 {
                precondition(errno == EINTR, "epoll_wait failed: errno \(errno)")
                continue
            }
            passes.add(1, ordering: .relaxed)
            var counter: UInt64 = 0
            _ = read(eventFD, &counter, 8)  // reset before taking the batch, so no wake-up is lost
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

    func close() {
        _ = Glibc.close(epollFD)
        _ = Glibc.close(eventFD)
    }
}
