import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A value that only the holder of its own pthread mutex may touch: the
/// guard for small hot state (a loop's inbox) that many threads hit.
///
/// The value lives behind a pointer, so accesses carry no dynamic
/// exclusivity checks (a class's stored `var` would: two runtime calls per
/// access), and the lock is a pthread mutex, which ThreadSanitizer
/// understands on every path (the standard library's `Mutex` on Linux lets
/// the kernel acquire a contended lock, which the sanitizer cannot see).
/// Package-wide: the daemon guards the state its threads share with it too.
///
/// The mutex is glibc's adaptive kind: a thread that finds it held retries
/// for a bounded number of rounds before it sleeps in the kernel. Its
/// critical sections are a few dozen nanoseconds, and a producer appending
/// in a tight loop holds the inbox's most of the time, so with the normal
/// kind most drains slept and woke through futex(2). Measured with
/// a driver (1M-block `perform` bursts, 10 per run, three runs, against
/// the normal kind in alternation): futex calls per 10M blocks 1.1-1.7M ->
/// 0.11-0.25M, medians `LoopThread.perform` 8.0-8.5 -> 9.0-9.7 M/s,
/// `loop.perform` 9.4-9.6 -> 10.6-16.0 M/s; with both threads pinned to
/// one CPU, where a spin cannot help, 11.2-12.3 M/s either way.
public final class Locked<State: ~Copyable>: @unchecked Sendable {
    // Both live in one allocation that is never moved: the mutex on the
    // first cache line, the value from the second on. Any thread, under
    // `mutex` for `state`.
    //
    // Why one aligned block: allocated apart (malloc put them 1 KiB apart),
    // the 40-byte mutex and the 52-byte inbox each straddled two cache
    // lines and shared them with unrelated heap data, so a producer's
    // append touched four lines that the loop thread takes over at every
    // drain, instead of two lines that hold nothing else. Together with
    // `Loop.inbox`'s place among the immutable fields, measured with
    // `LoopBench throughput` (9 alternated runs each): loop.perform median
    // 6.79 -> 9.50 M/s, 35% -> 50% of the raw queue.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let state: UnsafeMutablePointer<State>
    private let block: UnsafeMutableRawPointer

    /// A cache line's size on the machines we run on (x86-64, arm64).
    private static var lineSize: Int { 64 }

    /// Bytes from the block's start to the value: the mutex's size, rounded up to whole lines.
    private static var stateOffset: Int {
        let needed = Swift.max(MemoryLayout<pthread_mutex_t>.size, 1)
        return (needed + lineSize - 1) / lineSize * lineSize
    }

    public init(_ initial: consuming State) {
        let line = Locked.lineSize
        let stateBytes = (MemoryLayout<State>.size + line - 1) / line * line
        block = .allocate(byteCount: Locked.stateOffset + Swift.max(stateBytes, line),
                          alignment: Swift.max(line, MemoryLayout<State>.alignment))
        mutex = block.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        initializeMutex(mutex, kind: PTHREAD_MUTEX_ADAPTIVE_NP)
        state = (block + Locked.stateOffset).bindMemory(to: State.self, capacity: 1)
        state.initialize(to: initial)
    }

    deinit {
        state.deinitialize(count: 1)
        pthread_mutex_destroy(mutex)
        block.deallocate()
    }

    /// Runs `body` on the value with the mutex held.
    @inlinable @inline(__always)
    public func withLock<T: ~Copyable, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state.pointee)
    }
}
