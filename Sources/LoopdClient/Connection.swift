import NIOCore
import NIOPosix

/// A reply as the connection hands it to the request's caller: parsed, and
/// with its bytes when the caller asked for the line as it came.
struct ReplyLine: Sendable {
    var json: JSON
    var bytes: [UInt8]?
}

/// The continuation of one request, carried to the event loop. Its fields
/// are touched only on the connection's event loop (the continuation and
/// the bytes are set before the box is handed over).
final class PendingRequest: @unchecked Sendable {
    let id: Int64
    /// Keep the reply's bytes (for `RawReply.line`).
    let keepsLine: Bool
    var continuation: UnsafeContinuation<Result<ReplyLine, any Error>, Never>?
    /// The handler has it (`ReplyHandler.register`): from then on a cancel
    /// finishes it at once.
    var registered = false
    /// Cancelled before the handler had it: `register` finishes it then.
    /// (Its task may have been cancelled before the continuation was set.)
    var cancelledEarly = false
    /// Written to the socket (it holds an in-flight slot until answered or cancelled).
    var sent = false
    /// Answered, failed or cancelled: the continuation has been resumed.
    var done = false
    /// The request line, newline included, until it is written.
    var bytes: [UInt8]

    init(id: Int64, bytes: [UInt8], keepsLine: Bool) {
        self.id = id
        self.bytes = bytes
        self.keepsLine = keepsLine
    }

    func finish(_ result: Result<ReplyLine, any Error>) {
        guard !done else { return }
        done = true
        bytes = []
        continuation?.resume(returning: result)
        continuation = nil
    }
}

/// Carries the handler from the channel initializer to `Connection.open`;
/// written and read on the channel's event loop only.
final class HandlerSlot: @unchecked Sendable {
    var handler: NIOLoopBound<ReplyHandler>?
}

/// One connection to the daemon: the channel and its handler, which lives
/// on the channel's event loop (the serializer of all its state).
final class Connection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<ReplyHandler>

    init(channel: any Channel, handler: NIOLoopBound<ReplyHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Opens a connection to `path` on `group`, whose listening socket
    /// must have been made by `expectedUID` (any uid when nil).
    static func open(path: String, group: any EventLoopGroup, expectedUID: UInt32?, maxInFlight: Int,
                     maxReplyBytes: Int) -> EventLoopFuture<Connection> {
        connect(path: path, loop: group.next(), expectedUID: expectedUID, maxInFlight: maxInFlight,
                maxReplyBytes: maxReplyBytes, backlogRetry: .milliseconds(1), backlogDeadline: .now() + backlogPatience)
    }

    /// How long a connect keeps trying while the daemon's listen backlog is
    /// full (`EAGAIN`: a burst of clients connecting at once), where a
    /// blocking `connect(2)` would have waited for a place.
    static let backlogPatience: TimeAmount = .seconds(10)

    private static func connect(path: String, loop: any EventLoop, expectedUID: UInt32?, maxInFlight: Int,
                                maxReplyBytes: Int, backlogRetry: TimeAmount,
                                backlogDeadline: NIODeadline) -> EventLoopFuture<Connection> {
        attempt(path: path, loop: loop, expectedUID: expectedUID, maxInFlight: maxInFlight, maxReplyBytes: maxReplyBytes)
            .flatMapError { error in
                guard let refused = error as? LoopdError, refused.code == .cannotConnect, refused.errno == EAGAIN,
                      .now() + backlogRetry < backlogDeadline else {
                    return loop.makeFailedFuture(error)
                }
                // Retried after 1, 2, 4 … up to 100 ms.
                return loop.flatScheduleTask(in: backlogRetry) {
                    connect(path: path, loop: loop, expectedUID: expectedUID, maxInFlight: maxInFlight,
                            maxReplyBytes: maxReplyBytes, backlogRetry: min(backlogRetry * 2, .milliseconds(100)),
                            backlogDeadline: backlogDeadline)
                }.futureResult
            }
    }

    private static func attempt(path: String, loop: any EventLoop, expectedUID: UInt32?, maxInFlight: Int,
                                maxReplyBytes: Int) -> EventLoopFuture<Connection> {
        // On the loop's thread: the daemon takes the client's uid and gid
        // from the thread that connects, so a program that runs its event
        // loop under other credentials connects under those.
        loop.flatSubmit {
            let descriptor: Int32
            do {
                descriptor = try DaemonSocket.connect(path: path, expectedUID: expectedUID)
            } catch {
                return loop.makeFailedFuture(error)
            }
            // Filled in on the channel's event loop by the initializer and
            // read there once the channel is registered: a daemon that
            // refuses the connection (`busy`) may close it before then,
            // handlers and all.
            let slot = HandlerSlot()
            return ClientBootstrap(group: loop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = ReplyHandler(maxInFlight: maxInFlight, maxReplyBytes: maxReplyBytes)
                        slot.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .withConnectedSocket(descriptor)
                .map { channel in Connection(channel: channel, handler: slot.handler!) }
        }
    }

    /// Whether the connection is still open (the daemon has not closed it).
    var isActive: Bool { channel.isActive }

    /// Sends a request line (with its newline) and waits for the reply
    /// whose id is `id`. A cancelled task gets `CancellationError`; its
    /// reply, if one comes, is dropped.
    func request(id: Int64, line: [UInt8], keepsLine: Bool) async -> Result<ReplyLine, any Error> {
        let pending = PendingRequest(id: id, bytes: line, keepsLine: keepsLine)
        let loop = channel.eventLoop
        let handler = self.handler
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                pending.continuation = continuation
                if loop.inEventLoop {
                    handler.value.register(pending)
                } else {
                    loop.execute { handler.value.register(pending) }
                }
            }
        } onCancel: {
            if loop.inEventLoop {
                handler.value.cancel(pending)
            } else {
                loop.execute { handler.value.cancel(pending) }
            }
        }
    }

    /// Closes the connection: every request in flight fails with `connectionClosed`.
    func close() -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.close(promise: promise)
        return promise.futureResult.recover { _ in }
    }
}
