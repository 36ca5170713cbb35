import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The queue reference for the priorities row: beanstalkd on a Unix
/// socket (`-l unix:PATH`, beanstalkd 1.12), no binlog, driven by this
/// benchmark's own client with `put <pri> 0 60 1` pipelined.
final class BeanstalkReference {
    let pid: pid_t
    let socketPath: String
    let version: String

    /// Starts beanstalkd, under `wrapper` (valgrind) if given; throws (with
    /// the reason) when it is not installed.
    static func start(directory: String, wrapper: [String] = []) throws(BenchError) -> BeanstalkReference {
        guard let binary = Files.which("beanstalkd") else {
            throw BenchError("beanstalkd not found on PATH (make setup-bench puts it in .build/tools/bin)")
        }
        return try BeanstalkReference(command: wrapper + [binary], directory: directory,
                                      readySeconds: wrapper.isEmpty ? 10 : 60)
    }

    private init(command: [String], directory: String, readySeconds: UInt64) throws(BenchError) {
        socketPath = directory + "/beanstalkd.sock"
        _ = unlink(socketPath)  // the previous round's
        pid = try Processes.spawn(command[0], Array(command.dropFirst()) + ["-l", "unix:" + socketPath], cwd: directory,
                                  logPath: directory + "/beanstalkd.log")
        Children.beanstalkd.store(pid, ordering: .releasing)
        let deadline = monotonicNanoseconds() + readySeconds * 1_000_000_000
        while (try? ClientSocket.connect(path: socketPath, ioTimeoutSeconds: 2)).map({ ClientSocket.close($0); return true }) != true {
            if let status = Processes.exitStatus(pid) {
                Children.beanstalkd.store(0, ordering: .releasing)
                throw BenchError("beanstalkd \(status): \(Files.read(directory + "/beanstalkd.log") ?? "")")
            }
            if monotonicNanoseconds() > deadline {
                _ = Processes.stop(pid, graceSeconds: 2)
                Children.beanstalkd.store(0, ordering: .releasing)
                throw BenchError("beanstalkd did not accept a connection within \(readySeconds) s")
            }
            blockThread(milliseconds: 20)
        }
        version = "beanstalkd 1.12"
    }

    /// Puts jobs of random priority (`priorities`, cycled) for `seconds`,
    /// keeping `depth` in flight; every reply must be `INSERTED <id>`.
    /// `window` is open from the first put to the last reply.
    func put(depth: Int, priorities: [UInt32], seconds: Double,
             window: WakeWindow) throws(BenchError) -> (jobs: Int, seconds: Double, wakes: WakeCounts) {
        let fd = try ClientSocket.connect(path: socketPath, ioTimeoutSeconds: 10)
        defer { ClientSocket.close(fd) }
        window.open()
        let result = Result { () throws(BenchError) in try put(fd, depth: depth, priorities: priorities, seconds: seconds) }
        let wakes = window.close()
        let (jobs, elapsed) = try result.get()
        return (jobs, elapsed, wakes)
    }

    private func put(_ fd: Int32, depth: Int, priorities: [UInt32], seconds: Double) throws(BenchError) -> (Int, Double) {
        let requests = priorities.map { Array("put \($0) 0 60 1\r\nx\r\n".utf8) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { buffer.deallocate() }
        var pending: [UInt8] = []
        var sent = 0, answered = 0, carry = 0
        let start = monotonicNanoseconds()
        let stopAt = start + UInt64(seconds * 1e9)
        var now = start
        // Until the time is up and every put is answered: one read may bring
        // every reply in flight, which must not end the run.
        repeat {
            if now < stopAt {
                while sent - answered < depth {
                    pending += requests[sent % requests.count]
                    sent += 1
                }
                try ClientSocket.writeAll(fd, pending)
                pending.removeAll(keepingCapacity: true)
            }
            let n = try ClientSocket.read(fd, buffer.baseAddress! + carry, buffer.count - carry)
            guard n > 0 else { throw BenchError("beanstalkd closed the connection") }
            // Count whole lines; each must be INSERTED.
            let bytes = buffer.bindMemory(to: UInt8.self)
            var lineStart = 0
            for i in 0..<(carry + n) where bytes[i] == 0x0A {
                guard bytes[lineStart] == UInt8(ascii: "I") else {
                    throw BenchError("beanstalkd replied \(String(decoding: bytes[lineStart...i], as: UTF8.self))")
                }
                answered += 1
                lineStart = i + 1
            }
            carry = carry + n - lineStart
            if carry > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + lineStart, carry) }
            now = monotonicNanoseconds()
        } while answered < sent || now < stopAt
        return (answered, Double(now - start) / 1e9)
    }

    /// Stops beanstalkd (SIGTERM, SIGKILL after `graceSeconds`).
    func stop(graceSeconds: Double = 2) -> String {
        defer { Children.beanstalkd.store(0, ordering: .releasing) }
        return Processes.stop(pid, graceSeconds: graceSeconds)
    }
}

/// Random priorities for the priorities row, the same for loopd and beanstalkd.
enum RandomPriorities {
    static let values: [UInt32] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<4096).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(truncatingIfNeeded: state >> 33)
        }
    }()
}

/// One blocking beanstalkd connection, a command and its reply at a time
/// (for the sequential runs of `--instructions`).
final class BeanstalkConnection {
    private let fd: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    private var start = 0, end = 0

    init(path: String, ioTimeoutSeconds: Int) throws(BenchError) {
        fd = try ClientSocket.connect(path: path, ioTimeoutSeconds: ioTimeoutSeconds)
    }

    deinit {
        ClientSocket.close(fd)
        buffer.deallocate()
    }

    /// `put 0 0 60 1` with one byte of body; the new job's id.
    @discardableResult
    func put() throws(BenchError) -> String {
        try ClientSocket.writeAll(fd, Self.putRequest)
        return String(try expect("INSERTED "))
    }

    /// Reserves the ready job (`reserve-with-timeout 0`) and deletes it:
    /// with `put`, a job's whole life.
    func reserveAndDelete() throws(BenchError) {
        try ClientSocket.writeAll(fd, Self.reserveRequest)
        let reserved = try expect("RESERVED ")
        _ = try line()  // the body
        let id = reserved.prefix { $0 != " " }
        try ClientSocket.writeAll(fd, Array("delete \(id)\r\n".utf8))
        _ = try expect("DELETED")
    }

    private static let putRequest = Array("put 0 0 60 1\r\nx\r\n".utf8)
    private static let reserveRequest = Array("reserve-with-timeout 0\r\n".utf8)

    /// The next reply line, which must start with `prefix`; the rest of it.
    private func expect(_ prefix: String) throws(BenchError) -> Substring {
        let reply = try line()
        guard reply.hasPrefix(prefix) else { throw BenchError("beanstalkd replied \(reply) (expected \(prefix)…)") }
        return reply.dropFirst(prefix.count)
    }

    /// The next line without its CRLF.
    private func line() throws(BenchError) -> String {
        while true {
            let bytes = buffer.bindMemory(to: UInt8.self)
            if let k = (start..<end).first(where: { bytes[$0] == 0x0A }) {
                let text = String(decoding: bytes[start..<k], as: UTF8.self)
                start = k + 1
                return text.hasSuffix("\r") ? String(text.dropLast()) : text
            }
            if start > 0 {
                memmove(buffer.baseAddress!, buffer.baseAddress! + start, end - start)
                end -= start
                start = 0
            }
            guard end < buffer.count else { throw BenchError("a beanstalkd reply line longer than \(buffer.count) bytes") }
            let n = try ClientSocket.read(fd, buffer.baseAddress! + end, buffer.count - end)
            guard n > 0 else { throw BenchError("beanstalkd closed the connection") }
            end += n
        }
    }
}
