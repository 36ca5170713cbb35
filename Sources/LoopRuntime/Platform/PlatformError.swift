import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A kernel call that failed at run time, with the `errno` it reported.
///
/// Programmer errors (`EBADF`, `EFAULT`, `EINVAL` on a call we built ourselves)
/// trap instead: they mean LoopRuntime or its caller broke an invariant.
public struct PlatformError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed, e.g. `"epoll_ctl"`.
    public let call: String
    /// The `errno` value it set.
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// Runs one kernel call: retries `EINTR`, captures `errno` at once, and
/// throws it as a `PlatformError`. `EBADF` and `EFAULT` are bugs and trap.
@inline(__always)
func syscallRetrying<T: FixedWidthInteger>(_ name: @autoclosure () -> String, _ body: () -> T) throws(PlatformError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        switch code {
        case EINTR:
            continue
        case EBADF, EFAULT:
            fatalError("\(name()) was handed a bad descriptor or address (errno \(code)): a LoopRuntime bug")
        default:
            throw PlatformError(call: name(), errno: code)
        }
    }
}

/// Closes a descriptor we own. A failure other than `EINTR` means we closed
/// something twice, which is a bug.
func closeDescriptor(_ fd: Int32) {
    if close(fd) == -1 && errno == EBADF {
        fatalError("close(\(fd)) on a descriptor that was not open: a LoopRuntime bug")
    }
}
