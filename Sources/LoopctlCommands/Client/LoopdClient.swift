import LoopdProtocol

/// loopctl's connection to loopd (docs/PROTOCOL.md), for the CLI and for
/// tests: the LoopdClient library's blocking client (`DaemonConnection`),
/// with loopctl's `ClientError` and `Reply`. The socket, the framing and
/// the matching of replies to requests are the library's.
///
/// It numbers its requests 1, 2, 3…, so several requests may be in flight
/// at once: `send` them all, then collect each with `reply(to:)` in any
/// order.
///
/// Not thread-safe: use one client from one thread at a time.
public final class LoopdClient {
    /// The socket path this client is connected to.
    public let path: String
    /// Longest reply line accepted. Replies are bounded by the daemon's output
    /// caps; this only stops a broken peer from growing memory without end.
    public static let maxReplyBytes = 64 << 20

    /// Nil once closed.
    private var connection: DaemonConnection?
    /// The requests sent whose replies nobody has collected yet.
    private var unanswered: [RequestID: DaemonConnection.Pending] = [:]

    /// Connects to the daemon's socket at `path`.
    ///
    /// - Parameters:
    ///   - serverUID: the uid that must have made the socket listen; nil
    ///     for the library's default (uid 0 at `/run/loopd.sock`, no check
    ///     elsewhere). A mismatch throws `ClientError.serverUIDMismatch`
    ///     before anything is sent.
    ///   - receiveTimeoutMs: when set, a wait for a reply longer
    ///     than this fails with `ClientError.protocol` instead of blocking
    ///     forever (tests and `loopctl top` use it; the other commands
    ///     wait as long as the job takes).
    public init(path: String, serverUID: ServerUIDOption? = nil, receiveTimeoutMs: Int? = nil) throws(ClientError) {
        self.path = path
        connection = try DaemonConnection.open(
            path: path, serverUID: serverUID, maxReplyBytes: Self.maxReplyBytes,
            replyTimeout: receiveTimeoutMs.map { .milliseconds(max(1, $0)) })
    }

    deinit { close() }

    /// Closes the connection, without waiting for the close to complete
    /// (loopctl exits next; requests still in flight get no reply). Idempotent.
    public func close() {
        guard let connection else { return }
        self.connection = nil
        unanswered = [:]
        connection.closeWithoutWaiting()
    }

    /// Sends one request: `{"id":<next>, …fields}`, where `fields` start
    /// with `op`. Returns the id to wait for.
    @discardableResult
    public func send(_ fields: [(String, JSON)]) throws(ClientError) -> RequestID {
        guard let connection else { throw .closed }
        guard case ("op", .string(let op))? = fields.first else {
            preconditionFailure("a request's fields start with its op")
        }
        let (id, pending) = connection.startRequest(op: op, Array(fields.dropFirst()))
        unanswered[id] = pending
        return id
    }

    /// Sends a request and waits for its reply.
    public func call(_ fields: [(String, JSON)]) throws(ClientError) -> Reply {
        try reply(to: send(fields))
    }

    /// Waits for the reply to request `id`, which `send` returned; the
    /// replies to other requests wait until they are asked for.
    ///
    /// A reply with no id is taken as the answer: the daemon sends one only
    /// when it could not read the request's id (for example `too_large`, after
    /// which it closes the connection), or when it refuses the connection
    /// (`busy`, `shutting_down`) and closes it before reading anything.
    public func reply(to id: RequestID) throws(ClientError) -> Reply {
        guard let connection else { throw .closed }
        guard let pending = unanswered.removeValue(forKey: id) else {
            throw .protocol("no request with id \(id.json.serialized()) is waiting for a reply")
        }
        return try Reply(line: connection.replyLine(to: pending))
    }
}
