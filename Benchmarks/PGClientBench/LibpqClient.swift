@_spi(Benchmarks) import LoopdCore
import LoopPlatform
import LoopRuntime

/// LoopdCore's PostgresConnection: libpq's non-blocking API, its socket a
/// descriptor source of the loop, so each completion runs where the
/// statement was issued, with no thread in between.
final class LibpqClient: Client, @unchecked Sendable {
    let name = "libpq"
    private let loop: Loop
    private let connection: PostgresConnection

    /// Connects on `loop` (the calling thread's) and makes the table (b) updates.
    init(loop: Loop, conninfo: String, timeoutSeconds: Int) throws(BenchFailure) {
        self.loop = loop
        // Later keywords override the expanded conninfo: no TLS or GSS
        // encryption, like the postgres-nio side.
        connection = PostgresConnection(
            loop: loop, parameters: [("dbname", conninfo), ("sslmode", "disable"), ("gssencmode", "disable")])
        let connecting = LoopWait(loop)
        connection.onConnected = { _ in connecting.finish() }
        connection.onLost = { why in connecting.finish("libpq: \(why)") }
        try connecting.run(seconds: timeoutSeconds, what: "libpq connect") { connection.start() }
        // A lost connection would be made again after a backoff: here it ends the run.
        connection.onLost = { why in
            emit("libpq: connection lost: \(why)")
            exitProcess(1)
        }
        let setup = LoopWait(loop)
        try setup.run(seconds: timeoutSeconds, what: "libpq setup") {
            connection.script(setupStatements.joined(separator: "; ")) { result in
                if case .failure(let error) = result { setup.finish("setup: \(error)") } else { setup.finish() }
            }
        }
    }

    func issue(_ statement: Statement, _ done: @escaping Done) {
        connection.query(statement.rawValue) { result in
            switch result {
            case .success(let rows):
                switch statement {
                case .select:
                    done(rows.rows.count == 1 && rows.value(0, "?column?") == "1" ? nil : "unexpected rows \(rows.rows)")
                case .update:
                    done(rows.affected == 1 ? nil : "updated \(rows.affected) rows, not 1")
                }
            case .failure(let error):
                done("\(error)")
            }
        }
    }

    func close() {
        connection.onLost = nil
        connection.close()
    }
}
