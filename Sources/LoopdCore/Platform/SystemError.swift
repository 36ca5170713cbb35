import Glibc

/// A failed kernel call in the daemon, with its errno. The daemon decides
/// per call site whether it is fatal (start-up), a client's problem (close
/// that connection) or transient (back off and retry).
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var errno: Int32
    public var detail: String?

    public init(_ call: String, errno: Int32, detail: String? = nil) {
        self.call = call
        self.errno = errno
        self.detail = detail
    }

    public var description: String {
        "\(call)\(detail.map { " \($0)" } ?? ""): \(errnoText(errno))"
    }

    /// `EBADF` or `EFAULT`: the caller handed the kernel a descriptor or a
    /// buffer it does not own, a bug in the caller rather than a refusal.
    var isCallerBug: Bool { errno == EBADF || errno == EFAULT }
}

/// The text of an errno (strerror), for messages. Any thread, as the error
/// descriptions that call it always were.
func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// Runs a call returning -1 on failure: retries EINTR, throws the errno
/// (with `detail`, such as the path, in the error).
@inline(__always)
func retrying<T: FixedWidthInteger>(
    _ name: StaticString, detail: String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let r = body()
        if r != -1 { return r }
        let e = Glibc.errno
        if e == EINTR { continue }
        throw SystemError("\(name)", errno: e, detail: detail)
    }
}
