import Logging
import LoopdCore
import NIOPosix
import PostgresNIO

// loopd's main (Sources/loopd/main.swift) with postgres-nio linked in and
// reachable, so the linker keeps what the fleet would use of it: a connection
// and a query. Its stripped size beside loopd's is what postgres-nio would
// add to the daemon. `PGSizeProbe --postgres-nio-probe SOCKET USER DB` runs
// the postgres-nio path once (a check that it is really there).

let arguments = CommandLine.arguments
if arguments.count == 5, arguments[1] == "--postgres-nio-probe" {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let configuration = PostgresConnection.Configuration(
        unixSocketPath: arguments[2], username: arguments[3], password: nil, database: arguments[4])
    do {
        let connection = try PostgresConnection.connect(
            on: group.next(), configuration: configuration, id: 1, logger: Logger(label: "probe")
        ).wait()
        let result = try connection.query("SELECT 1", logger: Logger(label: "probe")).wait()
        print("postgres-nio: \(result.rows.count) row")
        try connection.close().wait()
    } catch {
        print("postgres-nio: \(String(reflecting: error))")
    }
    try? group.syncShutdownGracefully()
} else {
    DaemonMain.main()
}
