// The kernel calls of the benchmark: blocking Unix sockets, child
// processes, files and clocks.
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A failure that ends a scenario (or the run), with a message for people.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}


/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Sleeps the calling thread.
func sleepMilliseconds(_ ms: Int) {
    var request = timespec(tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

// MARK: - Unix stream sockets (blocking)

enum UnixSocket {
    /// Connects a blocking stream socket to `path`. Reads and writes give up
    /// after `ioTimeoutSeconds` (SO_RCVTIMEO / SO_SNDTIMEO), so no call of
    /// the benchmark can block for ever.
    static func connect(path: String, ioTimeoutSeconds: Int) throws(BenchError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(errnoText(errno))") }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            close(fd)
            throw BenchError("socket path too long (\(bytes.count) bytes): \(path)")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        var tv = timeval(tv_sec: ioTimeoutSeconds, tv_usec: 0)
        let tvSize = socklen_t(MemoryLayout<timeval>.size)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, tvSize)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, tvSize)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw BenchError("connect \(path): \(errnoText(e))")
        }
        return fd
    }

    /// Writes all `count` bytes.
    static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) throws(BenchError) {
        var done = 0
        while done < count {
            let n = write(fd, base + done, count - done)
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw BenchError("write timed out (the peer stopped reading)")
            } else {
                throw BenchError("write: \(errnoText(errno))")
            }
        }
    }

    /// Writes all of `bytes`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(BenchError) {
        var failure: BenchError?
        bytes.withUnsafeBytes { raw in
            do throws(BenchError) {
                try writeAll(fd, raw.baseAddress!, raw.count)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// One read; 0 at end of stream.
    static func read(_ fd: Int32, _ base: UnsafeMutableRawPointer, _ count: Int) throws(BenchError) -> Int {
        while true {
            let n = Glibc.read(fd, base, count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw BenchError("no reply within the I/O time-out") }
            throw BenchError("read: \(errnoText(errno))")
        }
    }

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }
}

// MARK: - Files and paths

enum Files {
    /// A fresh private directory `base/prefixXXXXXX`.
    static func makeTempDirectory(base: String, prefix: String) throws(BenchError) -> String {
        var template = Array((base + "/" + prefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw BenchError("mkdtemp in \(base): \(errnoText(errno))") }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    static func write(_ path: String, _ text: String) throws(BenchError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError("open \(path): \(errnoText(errno))") }
        defer { _ = Glibc.close(fd) }
        let bytes = Array(text.utf8)
        try UnixSocket.writeAll(fd, bytes)
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// The directory this executable sits in (from /proc/self/exe).
    static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// `name` searched in $PATH (then the usual sbin/bin directories).
    static func which(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? ""
        let dirs = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        return dirs.lazy.map { $0 + "/" + name }.first(where: isExecutable)
    }

    /// The type of the file system `path` is on ("ext4", "tmpfs", …), from
    /// the longest matching mount point in /proc/self/mounts.
    static func fileSystemName(_ path: String) -> String {
        var best = (length: -1, type: "unknown")
        for line in (read("/proc/self/mounts") ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = String(fields[1])
            let covers = mountPoint == "/" || path == mountPoint || path.hasPrefix(mountPoint + "/")
            if covers && mountPoint.count >= best.length { best = (mountPoint.count, String(fields[2])) }
        }
        return best.type
    }
}

// MARK: - Child processes

enum Processes {
    /// Starts `path args…` with stdin from /dev/null, stdout and stderr
    /// appended to `logPath`, in `cwd`, with this process's environment.
    /// With `dieWithParent`, wraps it in `setpriv --pdeathsig KILL` (when
    /// present), so even a SIGKILL of the benchmark takes the child along.
    static func spawn(_ path: String, _ args: [String], cwd: String, logPath: String,
                      dieWithParent: Bool = true) throws(BenchError) -> pid_t {
        var argv = [path] + args
        var program = path
        if dieWithParent, isExecutableSetpriv {
            argv = ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--"] + argv
            program = "/usr/bin/setpriv"
        }
        let log = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw BenchError("open \(logPath): \(errnoText(errno))") }
        defer { _ = Glibc.close(log) }
        do {
            return try ChildProcess.spawn(program, argv: argv, environment: nil, cwd: cwd, stdout: log, stderr: log)
        } catch {
            throw BenchError("spawn \(path): \(errnoText(error.errno))")
        }
    }

    private static let isExecutableSetpriv = Files.isExecutable("/usr/bin/setpriv")

    /// How a child ended, if it has (reaps it).
    static func exitStatus(_ pid: pid_t) -> String? {
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return rc < 0 ? "gone (\(errnoText(errno)))" : nil }
        return describe(status)
    }

    /// Waits up to `seconds` for the child to end; its status, or nil.
    static func waitExit(_ pid: pid_t, seconds: Double) -> String? {
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        while true {
            if let s = exitStatus(pid) { return s }
            if monotonicNanoseconds() >= deadline { return nil }
            sleepMilliseconds(5)
        }
    }

    /// SIGTERM, then SIGKILL after `graceSeconds`; reaps it. How it ended.
    @discardableResult
    static func stop(_ pid: pid_t, graceSeconds: Double) -> String {
        if let s = exitStatus(pid) { return "had already " + s }
        kill(pid, SIGTERM)
        if let s = waitExit(pid, seconds: graceSeconds) { return s }
        kill(pid, SIGKILL)
        return (waitExit(pid, seconds: 5) ?? "did not die") + " (SIGKILL after \(graceSeconds) s)"
    }

    private static func describe(_ status: Int32) -> String {
        let signal = status & 0x7F
        if signal == 0 { return "exited \((status >> 8) & 0xFF)" }
        return "killed by signal \(signal)"
    }

    /// User + system CPU seconds a process has used (from /proc/PID/stat).
    static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let stat = Files.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// User + system CPU seconds of this process.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return s(usage.ru_utime) + s(usage.ru_stime)
    }

    /// The 1-minute load average.
    static func loadAverage() -> String {
        Files.read("/proc/loadavg")?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }
}

/// Writes to stderr without stdio's shared `FILE *` (not concurrency-safe in Swift 6).
func writeStderr(_ text: String) { writeFD(2, text) }

/// A line of the report on stdout, unbuffered, so it interleaves correctly
/// with the progress lines on stderr.
func out(_ text: String = "") { writeFD(1, text + "\n") }

private func writeFD(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        done += n
    }
    bytes.removeAll()
}
