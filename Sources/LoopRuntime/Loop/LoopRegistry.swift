#if canImport(Glibc)
import LoopPlatform
import Glibc
#endif

/// The process-wide table of loops by thread (R1). A thread-exit slot holds
/// the calling thread's loop for a fast `Loop.current`; when the thread
/// exits, the slot hands the loop back and it leaves the table.
final class LoopRegistry: @unchecked Sendable {
    static let shared = LoopRegistry()

    // Immutable after init.
    private let slot = ThreadExitSlot<Loop>()
    private let lock = Lock()
    private var loops: [pid_t: Loop] = [:]  // guarded by lock

    private init() {}

    /// The calling thread's loop if it has one already, without creating it.
    @inline(__always)
    func currentLoopIfAny() -> Loop? {
        if let loop = slot.value { return loop }
        let tid = currentThreadID()
        guard let loop = lock.withLock({ loops[tid] }) else { return nil }
        adopt(loop)
        return loop
    }

    func currentLoop() -> Loop {
        if let loop = currentLoopIfAny() { return loop }
        let tid = currentThreadID()
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
        let pid = processID()
        return lock.withLock {
            if let existing = loops[pid] { return existing }
            let made = makeLoop(tid: pid)
            loops[pid] = made
            return made
        }
    }

    private func makeLoop(tid: pid_t) -> Loop {
        do {
            return Loop(threadID: tid, isMain: tid == processID(), backend: try KernelBackend())
        } catch {
            fatalError("cannot create a run loop: \(error)")
        }
    }

    /// Makes the calling thread's loop over `backend` instead of the
    /// kernel's: how tests play the kernel. The thread must have no loop yet.
    func makeCurrentLoop(backend: any LoopBackend) -> Loop {
        precondition(currentLoopIfAny() == nil, "this thread has a loop already")
        let tid = currentThreadID()
        let loop = Loop(threadID: tid, isMain: tid == processID(), backend: backend)
        lock.withLock { loops[tid] = loop }
        adopt(loop)
        return loop
    }

    /// Stores the loop in the thread's slot, so the thread's exit tears it down.
    private func adopt(_ loop: Loop) {
        slot.store(loop)
    }

    fileprivate func threadExited(_ loop: Loop) {
        lock.withLock {
            if loops[loop.threadID] === loop { loops[loop.threadID] = nil }
        }
        loop.tearDown()
    }
}

extension Loop: ThreadExitObserver {
    package func threadDidExit() { LoopRegistry.shared.threadExited(self) }
}
