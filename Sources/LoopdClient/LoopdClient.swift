import NIOCore
import NIOPosix
import Synchronization

/// An async client for loopd (docs/PROTOCOL.md) over one Unix socket
/// connection, on SwiftNIO.
///
/// ```swift
/// let client = try await LoopdClient.connect(socketPath: "/run/loopd.sock")
/// let job = try await client.submit("echo", ["hello"])
/// print(job.output ?? "")          // hello
/// ```
///
/// One connection carries many requests at once: every call gets its own
/// request id and its reply is matched by id, so any number of tasks may
/// share one client (it is `Sendable`). At most
/// `Configuration.maxInFlight` requests are on the wire at a time; further
/// callers suspend until a reply frees a slot. A task cancelled while it
/// waits gets `CancellationError`; the connection stays usable and the
/// late reply is dropped.
///
/// When the daemon closes the connection (a restart, say), the requests in
/// flight and every later one fail with `LoopdError.Code.connectionClosed`
/// until `reconnect()` is called (or at once, with
/// `Configuration.reconnectsAutomatically`).
public final class LoopdClient: Sendable {
    /// How a client behaves.
    public struct Configuration: Sendable {
        /// At most this many requests on the wire at once; further callers
        /// suspend until replies come. Default 1024.
        public var maxInFlight: Int
        /// The longest reply line accepted, in bytes. Default 64 MiB.
        public var maxReplyBytes: Int
        /// When the connection has closed, the next request connects anew
        /// (once) instead of failing with `connectionClosed`. Default false:
        /// call `reconnect()`. A request that was in flight when the
        /// connection closed fails either way: it may or may not have run.
        public var reconnectsAutomatically: Bool
        /// Which uid must have made the daemon's listening socket, checked
        /// on every connect before anything is written. Default
        /// `.automatic`: uid 0 at ``LoopdClient/installedSocketPath``,
        /// no check elsewhere. A mismatch throws `serverUIDMismatch`.
        public var serverUID: ServerUID

        /// A configuration; the defaults suit most programs.
        public init(maxInFlight: Int = 1024, maxReplyBytes: Int = 64 << 20, reconnectsAutomatically: Bool = false,
                    serverUID: ServerUID = .automatic) {
            precondition(maxInFlight > 0, "maxInFlight must be positive")
            self.maxInFlight = maxInFlight
            self.maxReplyBytes = maxReplyBytes
            self.reconnectsAutomatically = reconnectsAutomatically
            self.serverUID = serverUID
        }
    }

    /// The socket path.
    public let socketPath: String
    /// The configuration.
    public let configuration: Configuration
    /// The event loop group the client was given.
    public let eventLoopGroup: any EventLoopGroup
    /// The event loop of the group that every connection of this client
    /// runs on: its thread does the client's I/O and matches the replies.
    public let eventLoop: any EventLoop
    /// `eventLoop` as a task executor. Tasks that prefer it
    /// (`withTaskExecutorPreference(client.taskExecutor) { … }`) run on the
    /// thread that does the client's I/O, so a request and its reply cost
    /// no hop between threads: for tight request loops (command-line tools,
    /// benchmarks, a host app's handlers that already run there). Work that
    /// blocks or computes for long does not belong there.
    public let taskExecutor: any TaskExecutor

    private struct State: Sendable {
        var connection: Connection?
        /// A connect in progress: concurrent `reconnect()`s share it.
        var connecting: EventLoopFuture<Connection>?
        var closed = false
    }

    private let state = Mutex(State())
    private let nextID = Atomic<Int64>(1)

    /// A client for the daemon at `socketPath`, not connected yet: call
    /// `connect()` (or use `LoopdClient.connect(socketPath:…)`).
    ///
    /// - Parameters:
    ///   - socketPath: the daemon's Unix socket.
    ///   - configuration: how the client behaves.
    ///   - eventLoopGroup: the host application's group (Vapor's,
    ///     Hummingbird's); by default NIO's shared singleton group.
    public init(socketPath: String, configuration: Configuration = Configuration(),
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.socketPath = socketPath
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        eventLoop = eventLoopGroup.any()
        taskExecutor = EventLoopTaskExecutor(eventLoop)
    }

    deinit {
        // A channel stays registered with its event loop until closed.
        state.withLock { $0.connection }?.channel.close(promise: nil)
    }

    /// Connects to the daemon at `socketPath` and returns the client.
    /// Throws `LoopdError` with code `cannotConnect` when nothing accepts
    /// there, `serverUIDMismatch` when the socket's listener is not the uid
    /// `configuration.serverUID` requires.
    public static func connect(socketPath: String, configuration: Configuration = Configuration(),
                               eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton)
        async throws -> LoopdClient {
        let client = LoopdClient(socketPath: socketPath, configuration: configuration, eventLoopGroup: eventLoopGroup)
        try await client.connect()
        return client
    }

    /// Connects, unless already connected.
    public func connect() async throws {
        if state.withLock({ $0.connection?.isActive ?? false }) { return }
        _ = try await reconnect()
    }

    /// Opens a new connection and makes it the client's; the old one, if
    /// any, is closed (its requests in flight fail with `connectionClosed`).
    /// Concurrent calls share one new connection.
    public func reconnect() async throws {
        _ = try await newConnection(replacing: state.withLock { $0.connection })
    }

    /// Whether the client has an open connection.
    public var isConnected: Bool { state.withLock { $0.connection?.isActive ?? false } }

    /// Closes the connection; requests in flight fail with `connectionClosed`.
    /// The client can connect again with `connect()`.
    public func close() async {
        let old = state.withLock { s -> Connection? in
            defer { s.connection = nil }
            return s.connection
        }
        if let old { try? await old.close().get() }
    }

    private func newConnection(replacing old: Connection?) async throws -> Connection {
        let future: EventLoopFuture<Connection> = state.withLock { s in
            // Someone replaced it already (or is doing so): use theirs.
            if let current = s.connection, current !== old, current.isActive {
                return eventLoop.makeSucceededFuture(current)
            }
            if let f = s.connecting { return f }
            let f = Connection.open(path: socketPath, group: eventLoop,
                                    expectedUID: configuration.serverUID.expectedUID(at: socketPath),
                                    maxInFlight: configuration.maxInFlight, maxReplyBytes: configuration.maxReplyBytes)
            s.connecting = f
            return f
        }
        let connection: Connection
        do {
            connection = try await future.get()
        } catch {
            state.withLock { if $0.connecting === future { $0.connecting = nil } }
            throw LoopdError.cannotConnect(socketPath, error)
        }
        let previous: Connection? = state.withLock { s in
            guard s.connecting === future else { return nil }
            s.connecting = nil
            defer { s.connection = connection }
            return s.connection
        }
        if let previous, previous !== connection { previous.channel.close(promise: nil) }
        return connection
    }

    private func currentConnection() async throws -> Connection {
        let current = state.withLock { $0.connection }
        if let current, !configuration.reconnectsAutomatically || current.isActive { return current }
        if current == nil && !configuration.reconnectsAutomatically {
            throw LoopdError(.connectionClosed, "not connected: call connect()")
        }
        return try await newConnection(replacing: current)
    }

    // MARK: Requests

    /// Sends a request of operation `op` with `fields` and returns the
    /// reply as it came, whether `ok` or not: for operations and fields this
    /// client has no method for yet, and for tools that show the daemon's
    /// reply itself. Throws only the client's own errors (a connection
    /// error; `invalidReply` for a line that is not a JSON object with a
    /// boolean `ok`) and `CancellationError`.
    ///
    /// When the daemon refuses the connection (`busy`, `shutting_down`) or
    /// a line over its limit (`too_large`), it writes one error line
    /// without an id and closes the connection: that line is then the
    /// reply, to this request and to any sent on the connection after it.
    public func send(op: String, _ fields: [(String, JSON)] = []) async throws -> RawReply {
        let reply = try await exchange(op: op, fields, keepsLine: true)
        return try RawReply(json: reply.json, bytes: reply.bytes ?? [])
    }

    /// `send(op:_:)` with an id from `nextRequestID()`.
    func send(id: Int64, op: String, _ fields: [(String, JSON)]) async throws -> RawReply {
        let reply = try await exchange(id: id, op: op, fields, keepsLine: true)
        return try RawReply(json: reply.json, bytes: reply.bytes ?? [])
    }

    /// Sends a request and returns its reply if `ok`; throws the reply's
    /// error otherwise.
    func call(_ op: String, _ fields: [(String, JSON)] = []) async throws -> JSON {
        let json = try await exchange(op: op, fields, keepsLine: false).json
        guard json["ok"] == .bool(true) else {
            guard json["ok"]?.boolValue != nil else {
                throw LoopdError(.invalidReply, "reply has no boolean \"ok\": \(json.serialized().prefix(200))")
            }
            throw LoopdError(errorObject: json["error"], reply: json)
        }
        return json
    }

    /// The id of the next request; `exchange(id:…)` sends it.
    func nextRequestID() -> Int64 { nextID.wrappingAdd(1, ordering: .relaxed).oldValue }

    private func exchange(op: String, _ fields: [(String, JSON)], keepsLine: Bool) async throws -> ReplyLine {
        try await exchange(id: nextRequestID(), op: op, fields, keepsLine: keepsLine)
    }

    /// Sends request `id` (from `nextRequestID()`) and waits for its reply.
    func exchange(id: Int64, op: String, _ fields: [(String, JSON)], keepsLine: Bool) async throws -> ReplyLine {
        try Task.checkCancellation()
        let connection: Connection
        if let current = state.withLock({ $0.connection }), !configuration.reconnectsAutomatically || current.isActive {
            connection = current
        } else {
            connection = try await currentConnection()
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96)
        bytes.appendLiteral(#"{"id":"#)
        bytes.appendDecimal(UInt64(id))
        bytes.appendLiteral(#","op":"#)
        JSON.string(op).write(into: &bytes)
        for (name, value) in fields {
            bytes.append(UInt8(ascii: ","))
            JSON.string(name).write(into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            value.write(into: &bytes)
        }
        bytes.appendLiteral("}\n")
        return try await connection.request(id: id, line: bytes, keepsLine: keepsLine).get()
    }
}

extension LoopdError {
    /// The error of a failed connect. `DaemonSocket` throws `LoopdError`s
    /// already (`cannotConnect`, `serverUIDMismatch`); what else can fail is
    /// NIO adopting the connected descriptor.
    static func cannotConnect(_ path: String, _ error: any Error) -> LoopdError {
        if let error = error as? LoopdError { return error }
        if let io = error as? IOError {
            return LoopdError(.cannotConnect, "cannot connect to loopd at \(path): \(io)", errno: io.errnoCode)
        }
        return LoopdError(.cannotConnect, "cannot connect to loopd at \(path): \(error)")
    }
}

/// Runs tasks' jobs on an event loop. Jobs enqueued on the loop itself (a
/// reply resuming its caller) are gathered and run by one loop task, instead
/// of one loop task each.
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    let eventLoop: any EventLoop
    /// Jobs enqueued on the loop's thread, waiting for `drain`; touched only there.
    private var local: [UnownedJob] = []
    private var running: [UnownedJob] = []
    private var drainScheduled = false

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard eventLoop.inEventLoop else {
            eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
            return
        }
        local.append(job)
        if !drainScheduled {
            drainScheduled = true
            eventLoop.execute { self.drain() }
        }
    }

    private func drain() {
        drainScheduled = false
        swap(&local, &running)
        for job in running { job.runSynchronously(on: asUnownedTaskExecutor()) }
        running.removeAll(keepingCapacity: true)
    }
}
