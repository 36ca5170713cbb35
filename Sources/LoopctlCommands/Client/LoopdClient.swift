import LoopPlatform
import LoopdProtocol

/// A small blocking client for loopd's JSON Lines protocol
/// (docs/PROTOCOL.md), for the CLI and for tests.
///
/// It numbers its requests 1, 2, 3… and matches replies by `id`, so several
/// requests may be in flight at once: `send` them all, then collect each with
/// `reply(to:)` in any order. Replies that arrive for another request than
/// the one asked for are kept until it is asked for.
///
/// Not thread-safe: use one client from one thread at a time.
public final class LoopdClient {
    /// The socket path this client is connected to.
    public let path: String
    /// Longest reply line accepted. Replies are bounded by the daemon's output
    /// caps; this only stops a broken peer from growing memory without end.
    public static let maxReplyBytes = 64 << 20

    private var fd: Int32
    private var framer = LineFramer(maxLineBytes: LoopdClient.maxReplyBytes)
    /// Lines read from the socket but not examined yet, oldest first.
    private var unreadLines: [String] = []
    /// Replies that came before anyone asked for them (out-of-order replies).
    private var early: [RequestID: Reply] = [:]
    private var nextID: Int64 = 1
    /// A write found the daemon gone; what it sent before is still readable.
    private var peerClosed = false
    /// One read's worth of bytes, allocated once for the client's life.
    private let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)

    /// Connects to the daemon's socket at `path`.
    ///
    /// - Parameter receiveTimeoutMs: when set, a wait for reply bytes longer
    ///   than this fails with `ClientError.protocol` instead of blocking
    ///   forever (tests use it; the CLI waits as long as the job takes).
    public init(path: String, receiveTimeoutMs: Int? = nil) throws(ClientError) {
        self.path = path
        do {
            fd = try DaemonSocket.open(path: path)
        } catch {
            chunk.deallocate()
            throw error
        }
        if let ms = receiveTimeoutMs { DaemonSocket.setReceiveTimeout(fd, milliseconds: max(1, ms)) }
    }

    deinit {
        close()
        chunk.deallocate()
    }

    /// Closes the connection. Idempotent.
    public func close() {
        if fd >= 0 {
            Descriptor.close(fd)
            fd = -1
        }
    }

    /// Sends one request: `{"id":<next>, …fields}`. Returns the id to wait for.
    @discardableResult
    public func send(_ fields: [(String, JSON)]) throws(ClientError) -> RequestID {
        let id = RequestID.integer(nextID)
        nextID += 1
        try sendLine(JSON.object([("id", id.json)] + fields).serialized())
        return id
    }

    /// Sends a line as it is (a newline is added). For tests and tools that
    /// build their own requests.
    public func sendLine(_ line: String) throws(ClientError) {
        guard fd >= 0 else { throw .closed }
        guard !peerClosed else { return }
        do {
            try DaemonSocket.writeAll(fd, Array(line.utf8) + [0x0A])
        } catch .closed {
            // The daemon may refuse a connection by writing one error line
            // (`busy`, `shutting_down`) and closing before it reads anything.
            // That line is still in our receive queue: keep going so
            // `reply(to:)` reads it; with nothing there it reports `closed`.
            peerClosed = true
        }
    }

    /// Sends a request and waits for its reply.
    public func call(_ fields: [(String, JSON)]) throws(ClientError) -> Reply {
        try reply(to: send(fields))
    }

    /// Waits for the reply to request `id`, keeping other replies for later.
    ///
    /// A reply with no id is taken as the answer: the daemon sends one only
    /// when it could not read the request's id (for example `too_large`, after
    /// which it closes the connection), and this client's requests always
    /// carry one, so it concerns whatever the caller is waiting for.
    public func reply(to id: RequestID) throws(ClientError) -> Reply {
        if let kept = early.removeValue(forKey: id) { return kept }
        while true {
            let reply = try nextReply()
            guard let replyID = reply.id else { return reply }
            if replyID == id { return reply }
            early[replyID] = reply
        }
    }

    /// The next reply off the wire, whatever its id.
    public func nextReply() throws(ClientError) -> Reply {
        while unreadLines.isEmpty { try fill() }
        return try Reply(line: unreadLines.removeFirst())
    }

    /// Reads once from the socket and frames what came.
    private func fill() throws(ClientError) {
        guard fd >= 0 else { throw .closed }
        let n = try DaemonSocket.read(fd, into: chunk)
        // End of stream: a half line left in the framer is a reply the
        // daemon never finished, so it is the same failure as no reply.
        if n == 0 { throw .closed }
        var lines: [String] = []
        let outcome = framer.append(UnsafeRawBufferPointer(rebasing: chunk[0..<n])) {
            lines.append(String(decoding: $0, as: UTF8.self))
        }
        unreadLines.append(contentsOf: lines)
        if outcome == .lineTooLong {
            throw .protocol("a reply line is longer than \(LoopdClient.maxReplyBytes) bytes")
        }
    }
}
