import LoopPlatform

/// Why a named-port operation failed. Runtime conditions only: misuse that
/// can never work (a negative timeout, say) is not modelled here.
public enum LoopPortError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another port, in this process or another, is registered under the name.
    case nameInUse
    /// No port is registered under the name.
    case notFound
    /// The name is empty, contains a NUL byte, or is longer than
    /// `LoopMessagePort.maximumNameLength` UTF-8 bytes.
    case invalidName
    /// The port is gone: the local port was invalidated (or its process
    /// exited), or this remote port was. Look the name up again to reach a
    /// port registered under it since.
    case invalid
    /// The receiver's queue stayed full for the whole send timeout.
    case sendTimedOut
    /// No reply came within the receive timeout.
    case receiveTimedOut
    /// The payload (or the handler's reply) exceeds
    /// `LoopMessagePort.maximumPayloadSize`.
    case tooLarge
    /// `sendRequest` was called on the thread whose loop holds the receiving
    /// port: that loop cannot run the handler while its thread waits for the
    /// reply, so the request could only time out. (Core Foundation just
    /// waits out the timeout; LoopRuntime says so at once.)
    case wouldDeadlock
    /// The port admits messages from its own user (and root) only, and the
    /// request came from another user (`LoopMessagePort.Senders.sameUser`).
    case refused
    /// The kernel refused something unexpected.
    case system(PlatformError)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .nameInUse: "the port name is already registered"
        case .notFound: "no port is registered under that name"
        case .invalidName: "port names are 1...\(LoopMessagePort.maximumNameLength) UTF-8 bytes without NUL"
        case .invalid: "the port is no longer valid"
        case .sendTimedOut: "the receiver's queue stayed full for the send timeout"
        case .receiveTimedOut: "no reply arrived within the receive timeout"
        case .tooLarge: "the message exceeds \(LoopMessagePort.maximumPayloadSize) bytes"
        case .refused: "the port admits messages from its own user only"
        case .wouldDeadlock: "a request to a port on the calling thread's own loop could never be answered"
        case .system(let error): error.description
        }
    }
}
