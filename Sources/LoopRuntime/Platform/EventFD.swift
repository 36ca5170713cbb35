import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A counter descriptor used to wake a loop or to mark a port readable.
final class EventFD: Sendable {
    let fd: Int32

    init() throws(PlatformError) {
        fd = try syscallRetrying("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { closeDescriptor(fd) }

    /// Makes the descriptor readable. Never blocks: a saturated counter is
    /// already readable, which is all a writer wants.
    func signal() {
        var one: UInt64 = 1
        while write(fd, &one, 8) == -1 {
            let code = errno
            if code == EINTR { continue }
            precondition(code == EAGAIN, "eventfd write failed with errno \(code)")
            return
        }
    }

    /// Resets the counter; returns whether it was signalled.
    @discardableResult
    func drain() -> Bool {
        var value: UInt64 = 0
        while read(fd, &value, 8) == -1 {
            let code = errno
            if code == EINTR { continue }
            precondition(code == EAGAIN, "eventfd read failed with errno \(code)")
            return false
        }
        return true
    }
}
