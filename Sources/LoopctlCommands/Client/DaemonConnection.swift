internal import LoopdClient
internal import NIOPosix
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The LoopdClient library's blocking client. In this module `LoopdClient`
/// names loopctl's own class, which hides the library's module of the same
/// name, so the library's class is reached with a module selector
/// (`LoopdClient::`, Swift 6.3). This file is the only one that imports the
/// library.
typealias DaemonConnection = LoopdClient::LoopdClient.Blocking

/// The library's client class, for its static members: the socket rule.
private typealias Library = LoopdClient::LoopdClient

extension SocketPath {
    /// The variable that names the socket, `LOOPD_SOCKET`.
    public static var environmentVariable: String { Library.socketEnvironmentVariable }
    /// The installed daemon's socket, `/run/loopd.sock`.
    public static var installed: String { Library.installedSocketPath }

    /// The library's default: a non-empty `LOOPD_SOCKET`, else `/run/loopd.sock`.
    static func libraryDefault(environment: (String) -> String?) -> String {
        Library.defaultSocketPath(environment: environment)
    }
}

extension Library.ServerUID {
    /// The library's check for loopctl's option; nil is the library's default.
    init(_ option: ServerUIDOption?) {
        switch option {
        case nil: self = .automatic
        case .uid(let uid)?: self = .uid(uid)
        case .any?: self = .any
        }
    }
}

extension DaemonConnection {
    /// The event loop every connection of the process runs on: one thread,
    /// started on first use. (NIO's shared group would start one a core.)
    static var eventLoopGroup: MultiThreadedEventLoopGroup {
        sharedGroup.withLock { group in
            if let group { return group }
            let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            group = made
            return made
        }
    }

    private static let sharedGroup = Locked<MultiThreadedEventLoopGroup?>(nil)

    /// Closes what is still open on the event loop and ends its thread, if
    /// it was started: the process then exits with nothing in flight (no
    /// channel half closed when a sanitizer looks at the heap at exit).
    static func shutDownEventLoop() {
        let group = sharedGroup.withLock { group in
            defer { group = nil }
            return group
        }
        try? group?.syncShutdownGracefully()
    }

    /// Connects to the daemon at `path` on loopctl's one event loop thread,
    /// checking the listener's uid as `serverUID` says (nil: the library's
    /// default). Each call waits at most `replyTimeout` for its reply.
    static func open(path: String, serverUID: ServerUIDOption?, maxReplyBytes: Int,
                     replyTimeout: Duration?) throws(ClientError) -> DaemonConnection {
        do {
            return try DaemonConnection(
                socketPath: path,
                configuration: .init(maxReplyBytes: maxReplyBytes, serverUID: Library.ServerUID(serverUID)),
                eventLoopGroup: eventLoopGroup, replyTimeout: replyTimeout)
        } catch {
            throw ClientError(error, path: path)
        }
    }

    /// Sends a request without waiting for its reply; the id it went out with.
    func startRequest(op: String, _ fields: [(String, JSON)]) -> (id: RequestID, pending: Pending) {
        let pending = start(op: op, fields)
        return (.integer(pending.id), pending)
    }

    /// Waits for the reply to `pending`: the line as it came.
    func replyLine(to pending: Pending) throws(ClientError) -> String {
        do {
            return try reply(to: pending).line
        } catch {
            throw ClientError(error, path: client.socketPath)
        }
    }

}

extension ClientError {
    /// loopctl's error for a failure of the library's client. A refusal by
    /// the daemon is not one: it arrives as a reply (`RawReply`).
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
