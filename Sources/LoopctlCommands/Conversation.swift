import LoopdClient
internal import NIOPosix
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

// How loopctl talks to loopd: the LoopdClient library's blocking client, on
// one event loop thread, and `ClientError` for a conversation that produced
// no reply. The socket, the framing, the request ids, the matching of
// replies and the parse of each reply line are the library's; commands read
// its `RawReply`.

extension LoopdClient.Blocking {
    /// Connects to the daemon at `path` on loopctl's event loop thread,
    /// checking the listener's uid as `serverUID` says (nil: the library's
    /// default, uid 0 at `/run/loopd.sock` and no check elsewhere). Each
    /// reply is waited for at most `replyTimeoutMs` (`loopctl top`, tests);
    /// nil waits as long as the job takes.
    static func connect(path: String, serverUID: ServerUIDOption?,
                        replyTimeoutMs: Int? = nil) throws(ClientError) -> LoopdClient.Blocking {
        do {
            return try LoopdClient.Blocking(
                socketPath: path, configuration: .init(serverUID: .init(serverUID)), eventLoopGroup: LoopctlEventLoop.group,
                replyTimeout: replyTimeoutMs.map { .milliseconds(max(1, $0)) })
        } catch {
            throw ClientError(error, path: path)
        }
    }

    /// Sends the request `fields`, which start with `op`, without waiting
    /// for its reply: several may be on the wire at once, and `answer(_:)`
    /// collects each, in any order.
    func start(_ fields: [(String, JSON)]) -> Pending {
        guard case ("op", .string(let op))? = fields.first else {
            preconditionFailure("a request's fields start with its op")
        }
        return start(op: op, Array(fields.dropFirst()))
    }

    /// Waits for the reply to `pending`. A refusal (`ok` false), one
    /// without an id (`busy`, `shutting_down`, `too_large`) included, is a
    /// reply, not a `ClientError`.
    func answer(_ pending: Pending) throws(ClientError) -> RawReply {
        do {
            return try reply(to: pending)
        } catch {
            throw ClientError(error, path: client.socketPath)
        }
    }

    /// Sends the request `fields`, which start with `op`, and waits for its reply.
    func call(_ fields: [(String, JSON)]) throws(ClientError) -> RawReply {
        try answer(start(fields))
    }
}

/// The event loop every connection of the process runs on: one thread,
/// started on first use. (NIO's shared group would start one a core.)
enum LoopctlEventLoop {
    private static let shared = Locked<MultiThreadedEventLoopGroup?>(nil)

    /// The group of that one thread.
    static var group: MultiThreadedEventLoopGroup {
        shared.withLock { group in
            if let group { return group }
            let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            group = made
            return made
        }
    }

    /// Closes what is still open on the event loop and ends its thread, if
    /// it was started: the process then exits with nothing in flight (no
    /// channel half closed when a sanitizer looks at the heap at exit).
    static func shutDown() {
        let group = shared.withLock { group in
            defer { group = nil }
            return group
        }
        try? group?.syncShutdownGracefully()
    }
}

/// What loopctl reads of a reply beyond `ok`, `json` and `line`.
extension RawReply {
    /// The error code as sent, including codes loopctl does not know.
    var errorCode: String? { json["error"]?["code"]?.stringValue }

    /// The error message as sent.
    var errorMessage: String { json["error"]?["message"]?.stringValue ?? "" }

    /// A string member every `ok` reply of this op carries.
    func requiredString(_ key: String) throws(ClientError) -> String {
        guard let s = json[key]?.stringValue else { throw .protocol("reply lacks the string \"\(key)\": \(line)") }
        return s
    }
}

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

    /// loopctl's error for a failure of the library's client.
    init(_ error: any Error, path: String) {
        guard let error = error as? LoopdError else {
            self = .protocol("\(error)")
            return
        }
        switch error.code {
        case .cannotConnect: self = .cannotConnect(path: path, errno: error.errno ?? EIO)
        case .connectionClosed: self = .closed
        case .replyTimedOut: self = .protocol("no reply from the daemon in time")
        case .serverUIDMismatch:
            guard let mismatch = error.serverUIDMismatch else {
                preconditionFailure("the library's serverUIDMismatch error carries the uids")
            }
            self = .serverUIDMismatch(path: mismatch.socketPath, expected: mismatch.expected, actual: mismatch.actual)
        default: self = .protocol(error.message)
        }
    }
}
