import Foundation
import Glibc
import LoopdProtocol
@testable import LoopdCore

/// A daemon running in-process on a thread of its own, on a temporary
/// socket and state directory, torn down by `stop()`.
final class RunningDaemon: @unchecked Sendable {
    let directory: String
    let socketPath: String
    /// A directory exec children, who run as another user, may write in:
    /// `directory/children` (0777), in a `directory` they may reach but
    /// not list (0711).
    let childDirectory: String
    let daemon: Daemon
    private let thread: Thread
    private let done = DispatchSemaphore(value: 0)

    init(configure: (inout DaemonConfig) -> Void = { _ in }, register: (Daemon) -> Void = { _ in },
         log: DaemonLogger = .silent) {
        directory = makeTempDirectory()
        socketPath = directory + "/loopd.sock"
        childDirectory = directory + "/children"
        chmod(directory, 0o711)
        mkdir(childDirectory, 0o777)
        chmod(childDirectory, 0o777)
        var config = DaemonConfig()
        config.server.socketPath = socketPath
        config.server.stateDirectory = directory + "/state"
        config.journal.fsync = false
        config.workers = [.init(name: "w1"), .init(name: "w2")]
        // Exec children run as another user than loopd's: as root, nobody;
        // a loopd that cannot switch users runs them as itself.
        config.exec.user = getuid() == 0 ? "nobody" : ""
        configure(&config)
        let daemon = Daemon(config: config, log: log)
        register(daemon)
        self.daemon = daemon
        let done = self.done
        thread = Thread {
            do { try daemon.run() } catch { fatalError("daemon failed to start: \(error)") }
            done.signal()
        }
        thread.start()
        daemon.waitUntilReady()
    }

    /// Shuts the daemon down and waits (bounded) for `run()` to return.
    func stop() {
        daemon.shutdown()
        _ = done.wait(timeout: .now() + 30)
    }

    func client() throws -> TestClient { try TestClient(path: socketPath) }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// Polls `condition` until it holds or `seconds` pass; the bound only stops
/// a hung test, it is never what a test asserts.
@discardableResult
func waitUntil(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}

/// Bytes this Unix stream socket sent that its peer has not read yet
/// (SIOCOUTQ; counted with the kernel's per-buffer overhead, so compare
/// with 0, not with a length).
func bytesUnreadByPeer(_ fd: Int32) -> Int32 {
    var queued: Int32 = 0
    return ioctl(fd, UInt(TIOCOUTQ), &queued) == 0 ? queued : -1
}

/// What a child process printed and how it exited.
struct ChildOutput {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `binary` with `arguments` as user `uid` (its primary group, no
/// supplementary groups) through setpriv(1); needs root. Bounded: a child
/// still running after `seconds` is killed and reported as status -1.
func runAsUser(_ uid: uid_t, _ binary: URL, _ arguments: [String], seconds: Double = 30) throws -> ChildOutput {
    guard let user = getpwuid(uid) else { throw POSIXError(.EINVAL) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    process.arguments = ["--reuid=\(uid)", "--regid=\(user.pointee.pw_gid)", "--clear-groups", "--", binary.path] + arguments
    process.environment = ["PATH": "/usr/bin:/bin"]
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    if !waitUntil(seconds, { !process.isRunning }) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return ChildOutput(status: -1, stdout: "", stderr: "killed after \(seconds) s")
    }
    process.waitUntilExit()
    return ChildOutput(status: process.terminationStatus,
                       stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                       stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
}

func makeTempDirectory() -> String {
    var template = Array("/tmp/loopd-test-XXXXXX".utf8CString)
    let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: p!)
}

/// Calls `body` with `path` as an `AF_UNIX` socket address, for bind(2)
/// and connect(2).
func withUnixAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(path.utf8)
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A blocking line client over a Unix socket, with a receive timeout so no
/// test can hang.
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// The descriptor is stored only once connected: a class whose stored
    /// properties are all set when its init throws still runs its deinit,
    /// which here would close the descriptor a second time (and so, now and
    /// then, a socket another test had just been given the same number for).
    init(path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let r = withUnixAddress(path) { connect(fd, $0, $1) }
        guard r == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        self.fd = fd
    }

    deinit { close(fd) }

    /// Leaves as a vanished client does: both directions shut, nothing more read.
    func hangUp() { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    func send(raw bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    func send(_ line: String) { send(raw: Array((line + "\n").utf8)) }

    /// The next line, or nil on end of file or after the receive timeout.
    func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeFirst(nl + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Reads until `lines` more lines have come (or end of file, or the
    /// receive timeout), counting them without making a string of each:
    /// for a flood of replies whose content does not matter. Calls
    /// `counted` with each chunk's count; returns how many came.
    @discardableResult
    func skipLines(_ lines: Int, counted: (Int) -> Void = { _ in }) -> Int {
        var seen = buffer.count { $0 == 0x0A }
        buffer.removeAll()
        counted(seen)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while seen < lines {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            let newLines = chunk[0..<n].count { $0 == 0x0A }
            seen += newLines
            counted(newLines)
        }
        return seen
    }

    /// The next reply, parsed.
    func readReply() -> JSON? {
        guard let line = readLine() else { return nil }
        return try? JSONParser.parse(Array(line.utf8))
    }

    /// Sends a request and reads one reply.
    func call(_ line: String) -> JSON? {
        send(line)
        return readReply()
    }

    /// Polls `status` of `job` (bounded) until its state is `wanted`;
    /// returns the last state seen.
    @discardableResult
    func waitForState(_ job: String, _ wanted: String, seconds: Double = 30) -> String {
        var state = ""
        waitUntil(seconds) {
            state = call(#"{"id":"wait-state","op":"status","job":"\#(job)"}"#)?["state"]?.stringValue ?? "?"
            return state == wanted
        }
        return state
    }

    /// Polls `workers` (bounded) until `worker` holds `held` jobs its mode
    /// does not admit; returns whether it did.
    func waitForHeld(_ worker: String, _ held: Int, seconds: Double = 30) -> Bool {
        waitUntil(seconds) {
            let list = call(#"{"id":"wait-held","op":"workers"}"#)?["workers"]?.arrayValue ?? []
            return list.first { $0["name"]?.stringValue == worker }?["held"] == .integer(Int64(held))
        }
    }

    /// Sends `batch` over and over, never reading a reply, until `limit`
    /// bytes went out or the daemon says it stopped reading this client:
    /// whenever the socket is full, `isPaused` (a `stats` from another
    /// client: `connections_paused`) tells a daemon that throttles from one
    /// that is only slow, which is waited for. Returns the bytes sent and
    /// whether the daemon paused.
    func floodWithoutReading(_ batch: [UInt8], limit: Int, isPaused: () -> Bool) -> (sent: Int, paused: Bool) {
        var sent = 0
        while sent < limit {
            let n = batch[(sent % batch.count)...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if n > 0 {
                sent += n
                continue
            }
            if isPaused() { return (sent, true) }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&p, 1, 100)  // room to send, or ask again
        }
        return (sent, false)
    }

    /// Whether the daemon closed the connection (bounded wait).
    func isClosedByPeer() -> Bool {
        while let _ = readLine() {}
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}

extension JSON {
    var ok: Bool? { self["ok"]?.boolValue }
    var errorCode: String? { self["error"]?["code"]?.stringValue }
}
