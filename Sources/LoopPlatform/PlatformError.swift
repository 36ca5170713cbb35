import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// A kernel call that failed, with the call's name and the `errno` it set.
///
/// Every throwing function of LoopPlatform throws this one type, and the
/// caller decides what a failure means: a bug (`isCallerBug`), a refusal
/// worth telling a user (`description`), or a transient state to retry.
public struct PlatformError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed, e.g. `"epoll_ctl(ADD)"`.
    public var call: String
    /// The `errno` value it set.
    public var errno: Int32
    /// What the call was about, when that helps a reader: a path, a program.
    public var detail: String?

    public init(call: String, errno: Int32, detail: String? = nil) {
        self.call = call
        self.errno = errno
        self.detail = detail
    }

    /// `"open /etc/loopd/loopd.toml: No such file or directory (errno 2)"`.
    public var description: String {
        "\(call)\(detail.map { " \($0)" } ?? ""): \(errnoText(errno)) (errno \(errno))"
    }

    /// `EBADF` or `EFAULT`: the caller handed the kernel a descriptor or a
    /// buffer it does not own, a bug in the caller rather than a refusal.
    public var isCallerBug: Bool { errno == EBADF || errno == EFAULT }
}

/// The text of an errno (`strerror`). Any thread.
public func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// Runs one kernel call that returns -1 on failure, under LoopPlatform's one
/// interruption policy:
///
/// - `EINTR` is retried at once, so no caller ever sees it. (Exceptions,
///   each documented at its call: `close`, which Linux completes even when
///   interrupted and so is never retried, and `epoll_wait`, which returns
///   to its loop as a spurious wake-up.)
/// - Any other errno is read at once, before anything can overwrite it, and
///   thrown as a `PlatformError` naming `call` (and `detail`).
/// - Nothing traps here: whether `EBADF` is a bug is the caller's to say.
@inlinable @inline(__always)
public func retryingInterrupts<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String, detail: @autoclosure () -> String? = nil, _ body: () -> T
) throws(PlatformError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw PlatformError(call: call(), errno: code, detail: detail())
    }
}
