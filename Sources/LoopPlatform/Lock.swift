import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A non-recursive mutex for state that several threads share. Unlike
/// `Synchronization.Mutex`, the guarded fields live beside it in their class,
/// each marked "guarded by lock", so values can leave the critical section
/// without `sending` gymnastics.
public final class Lock: @unchecked Sendable {
    // The pthread mutex needs a stable address: it is allocated once and
    // never moved. Any thread.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        initializeMutex(mutex, kind: PTHREAD_MUTEX_NORMAL)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable @inline(__always) public func lock() { pthread_mutex_lock(mutex) }
    @inlinable @inline(__always) public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    @inlinable @inline(__always)
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A one-shot latch a thread can wait on: used by `waitUntilDone` and by
/// thread start-up hand-offs.
public final class Latch: @unchecked Sendable {
    private let lock = Lock()
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var opened = false  // guarded by lock

    public init() {
        cond = .allocate(capacity: 1)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
    }

    /// Opens the latch and wakes every waiter.
    public func open() {
        lock.withLock {
            opened = true
            pthread_cond_broadcast(cond)
        }
    }

    /// Blocks until `open()` has been called.
    public func wait() {
        lock.lock()
        while !opened { lock.waitOn(cond) }
        lock.unlock()
    }

    /// Blocks until opened or `deadlineNanoseconds` (CLOCK_MONOTONIC) passes;
    /// returns whether it was opened.
    public func wait(untilMonotonic deadlineNanoseconds: UInt64) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        var ts = timespec(tv_sec: Int(deadlineNanoseconds / 1_000_000_000),
                          tv_nsec: Int(deadlineNanoseconds % 1_000_000_000))
        while !opened {
            if lock.waitOn(cond, until: &ts) == ETIMEDOUT { return opened }
        }
        return true
    }
}

/// A barrier for a fixed number of threads (pthread_barrier): each `wait()`
/// blocks until `count` threads are waiting, then all of them go on, and the
/// barrier is ready for the next round. Used to start threads together.
public final class ThreadBarrier: @unchecked Sendable {
    // The pthread barrier needs a stable address: allocated once, never moved.
    private let barrier: UnsafeMutablePointer<pthread_barrier_t>

    /// A barrier that opens when `count` threads (at least 1) wait at it.
    public init(count: Int) {
        precondition(count > 0, "a barrier for no thread")
        barrier = .allocate(capacity: 1)
        let r = pthread_barrier_init(barrier, nil, UInt32(count))
        precondition(r == 0, "pthread_barrier_init failed: \(r)")
    }

    deinit {
        pthread_barrier_destroy(barrier)
        barrier.deallocate()
    }

    /// Blocks until `count` threads, this one included, are waiting.
    public func wait() { _ = pthread_barrier_wait(barrier) }
}

extension Lock {
    fileprivate func waitOn(_ cond: UnsafeMutablePointer<pthread_cond_t>) {
        pthread_cond_wait(cond, mutex)
    }

    fileprivate func waitOn(_ cond: UnsafeMutablePointer<pthread_cond_t>, until ts: inout timespec) -> Int32 {
        pthread_cond_timedwait(cond, mutex, &ts)
    }
}

/// Initializes the pthread mutex at `mutex` as `kind` (a `PTHREAD_MUTEX_*`
/// type); traps if glibc refuses. The mutex must never move afterwards.
public func initializeMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, kind: Int) {
    var attr = pthread_mutexattr_t()
    pthread_mutexattr_init(&attr)
    pthread_mutexattr_settype(&attr, Int32(kind))
    let r = pthread_mutex_init(mutex, &attr)
    pthread_mutexattr_destroy(&attr)
    precondition(r == 0, "pthread_mutex_init failed: \(r)")
}
