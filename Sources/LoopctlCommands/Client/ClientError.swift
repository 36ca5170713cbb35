import LoopPlatform

/// Why a conversation with the daemon did not produce a reply. A reply
/// with `"ok":false` is not one of these: it is an answer, and callers read
/// its error code from the reply itself.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing accepted a connection at `path`; `errno` says why
    /// (`ENOENT`: no socket there, `ECONNREFUSED`: no daemon behind it, …).
    case cannotConnect(path: String, errno: Int32)
    /// The daemon closed the connection before answering.
    case closed
    /// The daemon sent something that is not a valid reply.
    case `protocol`(String)
    /// The socket at `path` was made to listen by uid `actual`, not by the
    /// `expected` one (`--server-uid`); nothing was sent to it.
    case serverUIDMismatch(path: String, expected: UInt32, actual: UInt32)

    /// A sentence for the user, without the `loopctl:` prefix.
    public var description: String {
        switch self {
        case .cannotConnect(let path, let code):
            "cannot connect to loopd at \(path): \(errnoText(code))"
        case .closed:
            "the daemon closed the connection before replying"
        case .protocol(let message):
            "protocol error: \(message)"
        case .serverUIDMismatch(let path, let expected, let actual):
            "refusing the daemon at \(path): uid \(actual) made its socket listen, not the expected uid \(expected)"
        }
    }
}
