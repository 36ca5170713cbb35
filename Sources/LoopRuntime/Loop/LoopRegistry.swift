import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// The process-wide table of loops by thread (R1). A thread-specific slot
/// holds the calling thread's loop for a fast `Loop.current`; its destructor
/// removes the loop from the table when the thread exits.
final class LoopRegistry: @unchecked Sendable {
    static let shared = LoopRegistry()

    // Immutable after init.
    private let key: pthread_key_t
    private let lock = Lock()
    private var loops: [pid_t: Loop] = [:]  // guarded by lock

    private init() {
        var k = pthread_key_t()
        let r = pthread_key_create(&k) { raw in
            guard let raw else { return }
            let loop = Unmanaged<Loop>.fromOpaque(raw).takeRetainedValue()
            LoopRegistry.shared.threadExited(loop)
        }
        precondition(r == 0, "pthread_key_create failed: \(r)")
        key = k
    }

    /// The calling thread's loop if it has one already, without creating it.
    @inline(__always)
    func currentLoopIfAny() -> Loop? {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Loop>.fromOpaque(raw).takeUnretainedValue()
        }
        let tid = cloop_gettid()
        guard let loop = lock.withLock({ loops[tid] }) else { return nil }
        adopt(loop)
        return loop
    }

    func currentLoop() -> Loop {
        if let loop = currentLoopIfAny() { return loop }
        let tid = cloop_gettid()
        let loop = lock.withLock { () -> Loop in
            if let existing = loops[tid] { return existing }
            let made = makeLoop(tid: tid)
            loops[tid] = made
            return made
        }
        adopt(loop)
        return loop
    }

    func mainLoop() -> Loop {
        let pid = getpid()
        return lock.withLock {
            if let existing = loops[pid] { return existing }
            let made = makeLoop(tid: pid)
            loops[pid] = made
            return made
        }
    }

    private func makeLoop(tid: pid_t) -> Loop {
        do {
            return try Loop(threadID: tid, isMain: tid == getpid())
        } catch {
            fatalError("cannot create a run loop: \(error)")
        }
    }

    /// Stores the loop in the thread's slot, so the thread's exit tears it down.
    private func adopt(_ loop: Loop) {
        pthread_setspecific(key, Unmanaged.passRetained(loop).toOpaque())
    }

    private func threadExited(_ loop: Loop) {
        lock.withLock {
            if loops[loop.threadID] === loop { loops[loop.threadID] = nil }
        }
        loop.tearDown()
    }
}
