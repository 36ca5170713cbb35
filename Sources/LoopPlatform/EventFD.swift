import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A counter descriptor used to wake a loop or to mark a port readable.
public final class EventFD: Sendable {
    public let fd: Int32

    public init() throws(PlatformError) {
        fd = try retryingInterrupts("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    deinit { Descriptor.closeOwned(fd) }

    /// Makes the descriptor readable. Never blocks: a saturated counter is
    /// already readable, which is all a writer wants.
    @inlinable
    public func signal() {
        var one: UInt64 = 1
        while write(fd, &one, 8) == -1 {
            let code = errno
            if code == EINTR { continue }
            precondition(code == EAGAIN, "eventfd write failed with errno \(code)")
            return
        }
    }

    /// Resets the counter; returns whether it was signalled.
    @inlinable @discardableResult
    public func drain() -> Bool {
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
