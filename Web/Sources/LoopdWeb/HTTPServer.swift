import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix

/// Where the dashboard listens.
public enum ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// A TCP address: `127.0.0.1:9477`, `[::1]:9477`.
    case tcp(host: String, port: Int)
    /// A Unix socket path (`unix:/run/loopd-web/http.sock`).
    case unix(String)
    /// A listening socket inherited from systemd (socket activation).
    case inherited(CInt)

    /// Parses `HOST:PORT`, `[V6]:PORT` or `unix:PATH`.
    public init(parsing text: String) throws {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/") else { throw WebError.config("a Unix socket path must be absolute: \(text)") }
            self = .unix(path)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else {
            throw WebError.config("listen on HOST:PORT or unix:PATH, not \(text)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw WebError.config("listen on HOST:PORT or unix:PATH, not \(text)") }
        self = .tcp(host: host, port: port)
    }

    /// The first socket systemd passed (LISTEN_PID is this process,
    /// LISTEN_FDS at least 1), or nil. The variables are removed, so
    /// nothing this process starts takes them for its own.
    public static func fromSystemd() -> ListenAddress? {
        let env = ProcessInfo.processInfo.environment
        guard env["LISTEN_PID"].flatMap({ Int32($0) }) == getpid(), let n = env["LISTEN_FDS"].flatMap(Int.init), n >= 1 else {
            return nil
        }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return .inherited(3)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        case .inherited(let fd): "the socket systemd passed (fd \(fd))"
        }
    }
}

/// Serves a Hummingbird router on one listening socket. Hummingbird's own
/// server binds its address itself; this one also takes a socket systemd
/// already bound (`loopd-web.socket`), with Hummingbird's HTTP/1.1 channel
/// and router doing everything past the accept.
public struct HTTPServer: Sendable {
    public let address: ListenAddress
    let responder: RouterResponder<BasicRequestContext>
    let logger: Logger

    public init(address: ListenAddress, router: Router<BasicRequestContext>, logger: Logger) {
        self.address = address
        responder = router.buildResponder()
        self.logger = logger
    }

    /// Binds (or takes the inherited socket), calls `onListening` with the
    /// bound address's description, and serves until the task is cancelled.
    public func run(onListening: @Sendable (String) -> Void = { _ in }) async throws {
        let responder = self.responder
        let logger = self.logger
        let http = HTTP1Channel(responder: { request, writer, channel in
            let context = BasicRequestContext(source: .init(channel: channel, logger: logger))
            let response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch {
                logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
                response = Response(status: .internalServerError)
            }
            try await writer.write(response: response.head, body: response.body)
        }, configuration: .init(idleTimeout: .seconds(60)))
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        let setup: @Sendable (any Channel) -> EventLoopFuture<HTTP1Channel.Value> = { http.setup(channel: $0, logger: logger) }
        let server: NIOAsyncChannel<HTTP1Channel.Value, Never>
        switch address {
        case .tcp(let host, let port):
            server = try await bootstrap.bind(host: host, port: port, serverBackPressureStrategy: nil, childChannelInitializer: setup)
        case .unix(let path):
            server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true,
                                              serverBackPressureStrategy: nil, childChannelInitializer: setup)
        case .inherited(let fd):
            server = try await bootstrap.bind(fd, cleanupExistingSocketFile: false, serverBackPressureStrategy: nil,
                                              childChannelInitializer: setup)
        }
        let bound: String
        switch server.channel.localAddress {
        case .v4(let a)?: bound = "\(a.host):\(server.channel.localAddress?.port ?? 0)"
        case .v6(let a)?: bound = "[\(a.host)]:\(server.channel.localAddress?.port ?? 0)"
        case .unixDomainSocket?: bound = "unix:\(server.channel.localAddress?.pathname ?? "")"
        default: bound = address.description
        }
        onListening(bound)
        try await withTaskCancellationHandler {
            try await server.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        group.addTask { await http.handle(value: connection, logger: logger) }
                    }
                }
            }
        } onCancel: {
            server.channel.close(promise: nil)
        }
    }
}
