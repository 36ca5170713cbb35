// The benchmark's use of the platform: blocking Unix sockets, child
// processes and files, on LoopPlatform's calls with the benchmark's messages.
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// A failure that ends a scenario (or the run), with a message for people.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Unix stream sockets (blocking)

/// A client's blocking connection calls, on LoopPlatform's `UnixSocket`,
/// with the benchmark's messages.
enum ClientSocket {
    /// Connects a blocking stream socket to `path`. The connect, reads and
    /// writes give up after `ioTimeoutSeconds` (SO_SNDTIMEO / SO_RCVTIMEO),
    /// so no call of the benchmark can block for ever.
    static func connect(path: String, ioTimeoutSeconds: Int) throws(BenchError) -> Int32 {
        do {
            return try UnixSocket.connect(path: path, nonBlocking: false, timeoutMilliseconds: ioTimeoutSeconds * 1000)
        } catch {
            throw BenchError("connect \(path): \(errnoText(error.errno))")
        }
    }

    /// Writes all of `bytes`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(BenchError) {
        let sent = bytes.withUnsafeBytes { raw in
            Result { () throws(PlatformError) in try UnixSocket.writeAll(fd, raw) }
        }
        guard case .failure(let error) = sent else { return }
        if error.errno == EAGAIN { throw BenchError("write timed out (the peer stopped reading)") }
        throw BenchError("write: \(errnoText(error.errno))")
    }

    /// One read; 0 at end of stream.
    static func read(_ fd: Int32, _ base: UnsafeMutableRawPointer, _ count: Int) throws(BenchError) -> Int {
        do {
            return try UnixSocket.receive(fd, into: UnsafeMutableRawBufferPointer(start: base, count: count))
        } catch where error.errno == EAGAIN {
            throw BenchError("no reply within the I/O time-out")
        } catch {
            throw BenchError("read: \(errnoText(error.errno))")
        }
    }

    static func close(_ fd: Int32) { Descriptor.close(fd) }
}

// MARK: - Files and paths

enum Files {
    /// Removes a run's directory (`rm -rf`), or with `keep` says where it was kept.
    static func removeRunDirectory(_ directory: String, keep: Bool) {
        guard !directory.isEmpty else { return }
        if keep {
            progress("kept \(directory)")
        } else if let pid = try? Processes.spawn("/bin/rm", ["-rf", directory], cwd: "/", logPath: "/dev/null",
                                                  dieWithParent: false) {
            _ = Processes.waitExit(pid, seconds: 10)
        }
    }

    /// A fresh private directory `base/prefixXXXXXX`.
    static func makeTempDirectory(base: String, prefix: String) throws(BenchError) -> String {
        do {
            return try FileSystem.makeTemporaryDirectory(in: base, prefix: prefix)
        } catch {
            throw BenchError("mkdtemp in \(base): \(errnoText(error.errno))")
        }
    }

    /// Replaces the file at `path` with `text`.
    static func write(_ path: String, _ text: String) throws(BenchError) {
        let fd: Int32
        do {
            fd = try FileSystem.open(path, .readWrite(create: true, truncate: true))
        } catch {
            throw BenchError("open \(path): \(errnoText(error.errno))")
        }
        defer { Descriptor.close(fd) }
        do {
            _ = try Descriptor.write(fd, Array(text.utf8), at: 0)
        } catch {
            throw BenchError("write \(path): \(errnoText(error.errno))")
        }
    }

    /// The whole file at `path` as text; nil if it cannot be read.
    static func read(_ path: String) -> String? {
        guard case .success(let bytes) = FileSystem.readFile(path, limit: .max) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func isExecutable(_ path: String) -> Bool { FileSystem.isExecutable(path) }

    /// The directory this executable sits in (from /proc/self/exe).
    static func executableDirectory() -> String? {
        guard let path = try? FileSystem.symbolicLinkTarget("/proc/self/exe"),
              let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// `name` searched in $PATH, then the usual sbin/bin directories, then
    /// the repository's .build/tools/bin, where `make setup-bench` puts the
    /// peers it takes out of Debian packages that bring a service.
    static func which(_ name: String) -> String? {
        let path = environmentVariable("PATH") ?? ""
        var dirs = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        // here = <repository>/Benchmarks/.build/<triple>/release
        if let here = executableDirectory() { dirs.append(here + "/../../../../.build/tools/bin") }
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
        let log: Int32
        do {
            log = try FileSystem.open(logPath, .append)
        } catch {
            throw BenchError("open \(logPath): \(errnoText(error.errno))")
        }
        defer { Descriptor.close(log) }
        do {
            return try ChildProcess.spawn(program, argv: argv, environment: nil, cwd: cwd, stdout: log, stderr: log)
        } catch {
            throw BenchError("spawn \(path): \(errnoText(error.errno))")
        }
    }

    private static let isExecutableSetpriv = Files.isExecutable("/usr/bin/setpriv")

    /// How a child ended, if it has (reaps it).
    static func exitStatus(_ pid: pid_t) -> String? {
        do {
            return try SignalPlatform.reapIfExited(pid).map(describe)
        } catch {
            return "gone (\(errnoText(error.errno)))"
        }
    }

    /// Waits up to `seconds` for the child to end; its status, or nil.
    static func waitExit(_ pid: pid_t, seconds: Double) -> String? {
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        while true {
            if let s = exitStatus(pid) { return s }
            if monotonicNanoseconds() >= deadline { return nil }
            blockThread(milliseconds: 5)
        }
    }

    /// SIGTERM, then SIGKILL after `graceSeconds`; reaps it. How it ended.
    @discardableResult
    static func stop(_ pid: pid_t, graceSeconds: Double) -> String {
        if let s = exitStatus(pid) { return "had already " + s }
        SignalPlatform.sendSignal(SIGTERM, toProcess: pid)
        if let s = waitExit(pid, seconds: graceSeconds) { return s }
        SignalPlatform.sendSignal(SIGKILL, toProcess: pid)
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
        return (user + system) / Double(clockTicksPerSecond())
    }

    /// User + system CPU seconds of this process.
    static func ownCPUSeconds() -> Double {
        Double(ResourceUsage.cpuNanoseconds(.process)) / 1e9
    }

    /// The 1-minute load average.
    static func loadAverage() -> String {
        Files.read("/proc/loadavg")?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }
}

/// A line of the report on stdout, unbuffered, so it interleaves correctly
/// with the progress lines on stderr.
func out(_ text: String = "") { writeStandard(1, text + "\n") }
