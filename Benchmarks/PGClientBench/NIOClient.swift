import Logging
import LoopRuntime
import NIOCore
import NIOPosix
import PostgresNIO

/// postgres-nio on its own event-loop thread, used the way loopd would use
/// it: the statement is issued from the loop's thread, and each result is
/// hopped back to the loop with `loop.perform` (which wakes the loop through
/// its eventfd), where it is read and the next statement issued.
final class NIOClient: Client, @unchecked Sendable {
    let name = "postgres-nio"
    private let loop: Loop
    private let group: MultiThreadedEventLoopGroup
    private let connection: PostgresConnection
    private let logger: Logger
    private let queries: [Statement: PostgresQuery] = [
        .select: PostgresQuery(unsafeSQL: Statement.select.rawValue),
        .update: PostgresQuery(unsafeSQL: Statement.update.rawValue),
    ]

    /// Connects, blocking the calling thread until the connection is up.
    init(loop: Loop, target: NIOTarget, timeoutSeconds: Int) throws(BenchFailure) {
        self.loop = loop
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        logger = Logger(label: "PGClientBench.postgres-nio")
        var configuration = switch target.peer {
        case .socket(let path):
            PostgresConnection.Configuration(
                unixSocketPath: path, username: target.user, password: target.password, database: target.database)
        case .tcp(let host, let port):
            PostgresConnection.Configuration(
                host: host, port: port, username: target.user, password: target.password, database: target.database,
                tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(Int64(timeoutSeconds))
        do {
            connection = try PostgresConnection.connect(
                on: group.next(), configuration: configuration, id: 1, logger: logger
            ).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw BenchFailure("postgres-nio: connect to \(target.description): \(String(reflecting: error))")
        }
        do {
            for sql in setupStatements { _ = try connection.query(PostgresQuery(unsafeSQL: sql), logger: logger).wait() }
        } catch {
            close()
            throw BenchFailure("postgres-nio: setup: \(String(reflecting: error))")
        }
    }

    func issue(_ statement: Statement, _ done: @escaping Done) {
        let loop = self.loop
        connection.query(queries[statement]!, logger: logger).whenComplete { result in
            // On postgres-nio's thread: hop to the loop, as loopd would.
            loop.perform(inModes: [.common]) {
                switch result {
                case .success(let r):
                    switch statement {
                    case .select:
                        done(r.rows.count == 1 && (try? r.rows.first?.decode(Int.self)) == 1 ? nil : "unexpected rows")
                    case .update:
                        done(r.metadata.rows == 1 ? nil : "updated \(r.metadata.rows ?? 0) rows, not 1")
                    }
                case .failure(let error):
                    done(String(reflecting: error))
                }
            }
        }
    }

    func close() {
        try? connection.close().wait()
        try? group.syncShutdownGracefully()
    }
}
