import ArgumentParser
import Foundation
import LoopdClient
import LoopdWeb
import Logging

/// loopd-web: the web dashboard of a loopd on this host.
@main
struct LoopdWebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopd-web",
        abstract: "A web dashboard for loopd: workers, jobs, failures, schedules and live charts.",
        discussion: """
            It talks to loopd over its socket as its own uid, and shows what loopd lets that uid see. \
            Without a password it only shows; with one, a logged-in operator may cancel and retry jobs, \
            switch a worker's mode and pause, resume or run a schedule. Under systemd it takes the \
            socket of loopd-web.socket. See docs/OPERATIONS.md, "Web dashboard".
            """,
        version: LoopdVersion.current)

    @Option(name: .long, help: "Where to listen: HOST:PORT or unix:PATH (ignored when systemd passes a socket).")
    var listen = "127.0.0.1:9477"

    @Option(name: .long, help: "loopd's socket (default: $LOOPD_SOCKET, else /run/loopd.sock).")
    var socket: String?

    @Option(name: .customLong("server-uid"), help: "The uid that must own loopd's socket, or \"any\" (default: 0 at /run/loopd.sock, no check elsewhere).")
    var serverUID: String?

    @Option(name: .customLong("password-file"), help: "The operator password's file (default: the systemd credential \"password\", if given). Without one: read-only.")
    var passwordFile: String?

    @Option(name: .long, help: "Seconds between live updates and figure readings (1 to 60).")
    var interval: Int = 2

    @Flag(name: .customLong("secure-cookies"), help: "Mark cookies Secure: the dashboard is reached over HTTPS (behind a proxy).")
    var secureCookies = false

    func validate() throws {
        guard (1...60).contains(interval) else { throw ValidationError("--interval must be 1 to 60 seconds") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "loopd-web")
        logger.logLevel = .notice
        let environment = ProcessInfo.processInfo.environment
        let socketPath = socket ?? LoopdClient.defaultSocketPath(environment: { environment[$0] })
        let uid: LoopdClient.ServerUID
        switch serverUID {
        case nil: uid = .automatic
        case "any"?: uid = .any
        case let text?:
            guard let n = UInt32(text) else { throw ValidationError("--server-uid takes a uid or \"any\", not \(text)") }
            uid = .uid(n)
        }
        var passwordPath = passwordFile
        if passwordPath == nil, let dir = environment["CREDENTIALS_DIRECTORY"],
           FileManager.default.fileExists(atPath: dir + "/password") {
            passwordPath = dir + "/password"
        }
        let password = try passwordPath.map(Operators.readPassword)
        let address = try ListenAddress.fromSystemd() ?? ListenAddress(parsing: listen)
        let daemon = DaemonView(socketPath: socketPath, serverUID: uid, interval: .seconds(interval))
        let dashboard = Dashboard(daemon: daemon, operators: Operators(password: password), secureCookies: secureCookies)
        let server = HTTPServer(address: address, router: dashboard.router(), logger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await daemon.sampleForever() }
            group.addTask {
                try await server.run { bound in
                    let mode = password == nil ? "read-only" : "operator login enabled"
                    let line = "loopd-web listening on \(bound), loopd at \(socketPath), \(mode)\n"
                    FileHandle.standardOutput.write(Data(line.utf8))
                }
            }
        }
    }
}

