import CThreadCredentials
import Foundation
import Testing
import LoopdClient
@testable import LoopctlCommands

#if canImport(Glibc)
import Glibc
#endif

// What the loopctl tests share: captured output, parsing, canned replies
// and a fake daemon.

/// Collects what a command prints.
final class Captured {
    var out = ""
    var err = ""

    /// A context with this environment and, when `now` is given, a clock
    /// stopped at that Unix millisecond.
    func context(environment: [String: String] = [:], now: Int64? = nil) -> CommandContext {
        CommandContext(
            environment: { environment[$0] },
            standardOutput: { self.out += $0 },
            standardError: { self.err += $0 },
            currentTimeUnixMs: now.map { now in { now } })
    }
}

/// Parses a loopctl command line into its subcommand.
func parse<C: ClientCommand>(_ arguments: [String], as: C.Type = C.self) throws -> C {
    let command = try Loopctl.parseAsRoot(arguments)
    return try #require(command as? C, "parsed as \(type(of: command))")
}

/// The request line a command would send as request 1.
func requestLine(_ command: some ClientCommand) -> String {
    JSON.object([("id", 1)] + command.requestFields).serialized()
}

/// Renders a canned reply line as `command` would, in human mode.
func human(_ command: some ClientCommand, _ line: String) throws -> CommandOutput {
    try command.render(RawReply(line: line))
}

/// Request lines the fake daemon saw, from its thread.
final class SeenLines: @unchecked Sendable {
    private let lock = NSLock()  // guards `lines`
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// A short unique socket path (sun_path holds 108 bytes).
func temporarySocketPath() -> String {
    "/tmp/loopctl-\(getpid())-\(UUID().uuidString.prefix(8)).sock"
}

/// A stand-in daemon: listens on a temporary Unix socket and, on one thread,
/// accepts connections one at a time, reads request lines and answers each
/// through `handler`. Enough to test the client's framing, id matching and
/// exit codes without the real daemon.
final class FakeServer: Sendable {
    /// What the fake daemon does with one request line.
    enum Answer: Sendable {
        /// Write these lines (each gets a newline).
        case lines([String])
        /// Read the next request before answering (for pipelining tests).
        case holdUntilNext
        /// Close the connection without answering.
        case close
    }

    let path: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private let ended = ConnectionCount()

    /// - Parameters:
    ///   - path: where to listen; by default a new temporary path.
    ///   - owner: when set, the socket is made to listen by a thread
    ///     running as this uid (and gid), so clients see that uid behind it
    ///     (`SO_PEERCRED`). Needs root.
    ///   - refusal: when set, every connection gets this line at once and
    ///     is closed unread, as loopd does when it is `busy`.
    init(path: String? = nil, listeningAs owner: UInt32? = nil, refusal: String? = nil,
         handler: @escaping @Sendable (_ request: String, _ held: [String]) -> Answer) throws {
        self.path = path ?? temporarySocketPath()
        let path = self.path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(listener >= 0)
        self.listener = listener
        let bound = withUnixAddress(path) { bind(listener, $0, $1) }
        try #require(bound == 0, "bind \(path): errno \(errno)")
        let listening = owner.map { cthreadcred_listen_as(listener, 8, $0, $0) } ?? listen(listener, 8)
        try #require(listening == 0, "listen \(path): errno \(errno)")
        let (done, ended) = (self.done, self.ended)
        Thread.detachNewThread {
            FakeServer.serve(listener: listener, refusal: refusal, ended: ended, handler: handler)
            done.signal()
        }
    }

    /// How many connections the server has read to their end: once a
    /// client has closed its connection, waiting for this count makes sure
    /// every line it wrote has been through `handler`.
    var connectionsEnded: Int { ended.value }

    /// Stops accepting, waits for the server thread, removes the socket.
    func stop() {
        // shutdown wakes the blocked accept (it then fails), so the thread ends.
        _ = shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        _ = close(listener)
        _ = unlink(path)
    }

    /// The response line for `request` with `fields` after `id`.
    static func reply(to request: String, _ fields: String) -> String {
        let id = (try? JSONParser.parse(request.utf8))?["id"]?.serialized() ?? "null"
        return fields.isEmpty ? "{\"id\":\(id)}" : "{\"id\":\(id),\(fields)}"
    }

    private static func serve(listener: Int32, refusal: String?, ended: ConnectionCount,
                              handler: @Sendable (String, [String]) -> Answer) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            if let refusal {
                _ = write(fd, refusal + "\n", refusal.utf8.count + 1)
            } else {
                converse(fd, handler)
            }
            _ = close(fd)
            ended.increment()
        }
    }

    private static func converse(_ fd: Int32, _ handler: @Sendable (String, [String]) -> Answer) {
        var pending: [UInt8] = []
        var held: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                switch handler(line, held) {
                case .holdUntilNext:
                    held.append(line)
                case .close:
                    return
                case .lines(let lines):
                    held.removeAll()
                    let out = Array(lines.map { $0 + "\n" }.joined().utf8)
                    var offset = 0
                    while offset < out.count {
                        let n = out.withUnsafeBytes { send(fd, $0.baseAddress! + offset, out.count - offset, Int32(MSG_NOSIGNAL)) }
                        if n <= 0 { return }
                        offset += n
                    }
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            pending.append(contentsOf: buffer[..<n])
        }
    }
}

/// A count the fake server's thread raises and tests read.
final class ConnectionCount: @unchecked Sendable {
    private let lock = NSLock()  // guards `count`
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// The built loopctl executable, run as a process.
enum LoopctlBinary {
    /// Where it is: next to the test bundle.
    static func url() -> URL? {
        var directory = Bundle.main.bundleURL
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        for candidate in [directory, Bundle.main.bundleURL.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("loopctl")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// Runs it with `arguments` and a bare environment; its exit status.
    static func run(_ binary: URL, _ arguments: [String]) throws -> Int32 {
        try outcome(binary, arguments).status
    }

    /// Runs it with `arguments`, a bare environment plus `environment`, in
    /// `directory` (the test's own when nil); its exit status and stderr.
    static func outcome(_ binary: URL, _ arguments: [String], environment: [String: String] = [:],
                        in directory: String? = nil) throws -> (status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
