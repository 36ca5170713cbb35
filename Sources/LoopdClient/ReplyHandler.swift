import NIOCore

/// Writes requests, frames reply lines and hands each to the request with
/// its id. Bounds the requests in flight: beyond `maxInFlight`, requests
/// wait in `backlog` (each one a suspended caller) until replies free a slot.
///
/// The requests of one pass of the event loop are gathered in one buffer
/// and written with one flush (one system call).
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
    /// An `"id":null` error (busy, shutting_down, too_large): the daemon
    /// closes the connection after it, and it is the reason given then.
    private var closingError: LoopdError?

    init(maxInFlight: Int, maxReplyBytes: Int) {
        self.maxInFlight = maxInFlight
        self.maxReplyBytes = maxReplyBytes
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(closingError ?? failure ?? LoopdError(.connectionClosed, "the connection was closed"))
        self.context = nil
    }

    // MARK: Requests

    func register(_ request: PendingRequest) {
        guard !request.done else { return }  // cancelled before it got here
        if let failure {
            request.finish(.failure(failure))
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
                    deliver(UnsafeBufferPointer(rebasing: all[0..<length]))
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
        inFlight -= 1
        do {
            let json = try Self.parse(line)
            request.finish(.success(ReplyLine(json: json, bytes: request.keepsLine ? Array(line) : nil)))
        } catch {
            request.finish(.failure(LoopdError(
                .invalidReply, "reply is not JSON (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))")))
        }
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

    /// A reply whose id is not one of ours: `"id":null` precedes a close.
    private func replyWithoutOurID(_ line: UnsafeBufferPointer<UInt8>) {
        guard let json = try? Self.parse(line) else {
            failure = LoopdError(.invalidReply, "reply is not JSON: \(String(decoding: line.prefix(200), as: UTF8.self))")
            context?.close(promise: nil)
            return
        }
        if json["id"] == .null, json["ok"]?.boolValue == false {
            closingError = LoopdError(errorObject: json["error"], reply: json)
        }
    }

    // MARK: End

    func channelInactive(context: ChannelHandlerContext) {
        fail(closingError ?? failure ?? LoopdError(.connectionClosed, "the daemon closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil {
            failure = LoopdError(.connectionClosed, "the connection failed: \(error)")
        }
        context.close(promise: nil)
    }

    /// Fails every request waiting or in flight; later ones fail at once.
    private func fail(_ error: LoopdError) {
        failure = error
        let waiting = pending.values
        pending = [:]
        backlog.removeAll()
        inFlight = 0
        outbound = nil
        for request in waiting { request.finish(.failure(error)) }
    }
}
