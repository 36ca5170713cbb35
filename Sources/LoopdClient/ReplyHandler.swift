import NIOCore

/// Writes requests, frames reply lines and hands each to the request with
/// its id. Bounds the requests in flight: beyond `maxInFlight`, requests
/// wait in `backlog` (each one a suspended caller) until replies free a slot.
///
/// The requests of one pass of the event loop are gathered in one buffer
/// and written with one flush (one system call).
///
/// A reply without an id (`"id":null`, or none) is the daemon's answer to
/// a request whose id it could not read: a line over its limit
/// (`too_large`), or any request on a connection it refused (`busy`,
/// `shutting_down`). It answers the request in flight when there is
/// exactly one; with several, nobody can tell which it concerns. An error
/// of that kind is followed by the daemon closing the connection: it is
/// then the answer to every request still waiting, and to any made later.
final class ReplyHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let maxInFlight: Int
    private let maxReplyBytes: Int
    private var context: ChannelHandlerContext?
    private var pending: [Int64: PendingRequest] = [:]
    private var backlog = CircularBuffer<PendingRequest>()
    private var inFlight = 0
    /// Requests written since the last flush.
    private var outbound: ByteBuffer?
    private var flushScheduled = false
    private var received: ByteBuffer?
    /// Why the connection is unusable, once it is.
    private var failure: LoopdError?
    /// An `"id":null` error (busy, shutting_down, too_large), with its
    /// bytes: the daemon closes the connection after it, and it answers the
    /// requests left then.
    private var closingReply: ReplyLine?

    init(maxInFlight: Int, maxReplyBytes: Int) {
        self.maxInFlight = maxInFlight
        self.maxReplyBytes = maxReplyBytes
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(failure ?? LoopdError(.connectionClosed, "the connection was closed"))
        self.context = nil
    }

    // MARK: Requests

    func register(_ request: PendingRequest) {
        request.registered = true
        if request.cancelledEarly {
            request.finish(.failure(CancellationError()))
            return
        }
        if failure != nil {
            finishAtEnd(request)
            return
        }
        pending[request.id] = request
        if inFlight < maxInFlight {
            write(request)
        } else {
            backlog.append(request)
        }
    }

    func cancel(_ request: PendingRequest) {
        guard !request.done else { return }
        guard request.registered else {
            request.cancelledEarly = true
            return
        }
        if pending.removeValue(forKey: request.id) != nil, request.sent {
            inFlight -= 1
            drainBacklog()
        }
        // A request still in `backlog` is skipped when its turn comes.
        request.finish(.failure(CancellationError()))
    }

    private func write(_ request: PendingRequest) {
        guard let context else { return }
        request.sent = true
        inFlight += 1
        if outbound == nil { outbound = context.channel.allocator.buffer(capacity: max(4096, request.bytes.count)) }
        outbound!.writeBytes(request.bytes)
        request.bytes = []
        if !flushScheduled {
            flushScheduled = true
            context.eventLoop.assumeIsolated().execute { [self] in
                flushScheduled = false
                guard let context = self.context, let buffer = outbound else { return }
                outbound = nil
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            }
        }
    }

    private func drainBacklog() {
        while inFlight < maxInFlight, let next = backlog.popFirst() {
            if !next.done { write(next) }
        }
    }

    // MARK: Replies

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if received == nil || received!.readableBytes == 0 {
            received = bytes
        } else {
            received!.writeBuffer(&bytes)
        }
        while let newline = received!.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - received!.readerIndex
            received!.withUnsafeReadableBytes { raw in
                raw.withMemoryRebound(to: UInt8.self) { all in
                    // A `\r` before the newline is not part of the line.
                    let end = length > 0 && all[length - 1] == UInt8(ascii: "\r") ? length - 1 : length
                    deliver(UnsafeBufferPointer(rebasing: all[0..<end]))
                }
            }
            received!.moveReaderIndex(forwardBy: length + 1)
        }
        if received!.readableBytes > maxReplyBytes {
            failure = LoopdError(.invalidReply, "a reply line is longer than \(maxReplyBytes) bytes")
            context.close(promise: nil)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard let r = received else { return }
        if r.readableBytes == 0 {
            received = nil
        } else if r.readerIndex > 1 << 16 {
            received!.discardReadBytes()
        }
    }

    private func deliver(_ line: UnsafeBufferPointer<UInt8>) {
        guard let id = Self.integerID(line) else {
            replyWithoutOurID(line)
            return
        }
        // An id nobody waits for: a cancelled request's late reply.
        guard let request = pending.removeValue(forKey: id) else { return }
        do {
            answer(request, with: try Self.parse(line), line)
        } catch {
            answer(request, with: .failure(Self.notJSON(error, line)))
        }
    }

    /// Hands `request`, in flight and just taken out of `pending`, its reply.
    private func answer(_ request: PendingRequest, with json: JSON, _ line: UnsafeBufferPointer<UInt8>) {
        answer(request, with: .success(ReplyLine(json: json, bytes: request.keepsLine ? Array(line) : nil)))
    }

    private func answer(_ request: PendingRequest, with result: Result<ReplyLine, any Error>) {
        inFlight -= 1
        request.finish(result)
        if !backlog.isEmpty { drainBacklog() }
    }

    /// A reply line's JSON, read in place and leniently: a reply is read,
    /// never trusted, so duplicate names and broken text do not fail it.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSON {
        try JSONParser.parse(buffer: line, maxDepth: 64, strictness: .lenient)
    }

    /// `{"id":N,` at the start of a reply line: loopd writes `id` first.
    static func integerID(_ line: UnsafeBufferPointer<UInt8>) -> Int64? {
        let prefix: StaticString = #"{"id":"#
        let n = prefix.utf8CodeUnitCount
        guard line.count > n + 1 else { return nil }
        for k in 0..<n where line[k] != prefix.utf8Start[k] { return nil }
        var k = n
        var value: Int64 = 0
        var digits = 0
        while k < line.count, line[k] >= 0x30, line[k] <= 0x39, digits < 18 {
            value = value &* 10 &+ Int64(line[k] &- 0x30)
            digits += 1
            k += 1
        }
        guard digits > 0, k < line.count, line[k] == UInt8(ascii: ",") else { return nil }
        return value
    }

    /// A reply that does not start with one of our ids: ours written
    /// otherwise (`{"ok":true,"id":3}`), one without an id (see the type's
    /// notes), or a late one for a cancelled request.
    private func replyWithoutOurID(_ line: UnsafeBufferPointer<UInt8>) {
        let json: JSON
        do {
            json = try Self.parse(line)
        } catch {
            failure = Self.notJSON(error, line)
            context?.close(promise: nil)
            return
        }
        switch json["id"] {
        case .integer(let id)?:
            if let request = pending.removeValue(forKey: id) { answer(request, with: json, line) }
        case nil, .null?:
            if json["ok"]?.boolValue == false, let code = json["error"]?["code"]?.stringValue,
               Self.closingCodes.contains(code) {
                closingReply = ReplyLine(json: json, bytes: Array(line))
            }
            if inFlight == 1, let only = pending.values.first(where: \.sent) {
                pending[only.id] = nil
                answer(only, with: json, line)
            }
        default:
            break
        }
    }

    /// The error codes after which the daemon closes the connection
    /// (docs/PROTOCOL.md, "Error codes").
    static let closingCodes: Set<String> = [ErrorCode.tooLarge.rawValue, ErrorCode.busy.rawValue,
                                            ErrorCode.shuttingDown.rawValue]

    /// The error for a line that is not JSON.
    static func notJSON(_ error: JSONSyntaxError, _ line: UnsafeBufferPointer<UInt8>) -> LoopdError {
        LoopdError(.invalidReply, "reply is not JSON (\(error)): \(excerpt(line))")
    }

    /// A line for an error message: whole up to 200 bytes, else its start.
    static func excerpt(_ line: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: line, as: UTF8.self)
        return text.utf8.count <= 200 ? text : String(text.prefix(200)) + "…"
    }

    // MARK: End

    func channelInactive(context: ChannelHandlerContext) {
        end(failure ?? LoopdError(.connectionClosed, "the daemon closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil {
            failure = LoopdError(.connectionClosed, "the connection failed: \(error)")
        }
        context.close(promise: nil)
    }

    /// The connection is over: every request waiting or in flight gets
    /// the daemon's closing reply if it sent one, else fails with `error`;
    /// later ones get the same at once.
    private func end(_ error: LoopdError) {
        if failure == nil { failure = error }
        let waiting = pending.values
        pending = [:]
        backlog.removeAll()
        inFlight = 0
        outbound = nil
        for request in waiting { finishAtEnd(request) }
    }

    /// Answers a request on a connection that is over (`failure` is set).
    private func finishAtEnd(_ request: PendingRequest) {
        if let closingReply {
            request.finish(.success(ReplyLine(json: closingReply.json, bytes: request.keepsLine ? closingReply.bytes : nil)))
        } else {
            request.finish(.failure(failure!))
        }
    }
}
