import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The machine's request/response reference: redis-server on a Unix socket
/// only, driven by redis-benchmark's PING test.
final class RedisReference {
    let pid: pid_t
    let socketPath: String
    let directory: String
    let benchmarkBinary: String
    let version: String

    /// What one redis-benchmark run reported. `-t ping` runs PING_INLINE
    /// and PING_MBULK; the faster of the two is the reference (the stricter
    /// one for loopd).
    struct Result: Sendable {
        var test: String
        var rps: Double
        var p50ms: Double?
        var p99ms: Double?
        /// Requests run, and CPU seconds redis-server spent on them.
        var requests = 0
        var serverCPU = 0.0
        /// redis-server's context switches and wake-ups over the run.
        var wakes = WakeCounts.none
        /// Which round of the run it belongs to (set by the caller).
        var round = 0
        /// Every test's req/s, for the notes.
        var all: [(String, Double)]
    }

    /// Starts redis-server; nil (with the reason) when it is not installed.
    static func start(directory: String) throws(BenchError) -> RedisReference {
        guard let server = Files.which("redis-server"), let bench = Files.which("redis-benchmark") else {
            throw BenchError("redis-server / redis-benchmark not found on PATH (make setup-bench: redis-tools, and redis-server in .build/tools/bin)")
        }
        return try RedisReference(server: server, benchmark: bench, directory: directory)
    }

    private init(server: String, benchmark: String, directory: String) throws(BenchError) {
        self.directory = directory
        benchmarkBinary = benchmark
        socketPath = directory + "/redis.sock"
        pid = try Processes.spawn(server, ["--port", "0", "--unixsocket", socketPath, "--save", "",
                                           "--appendonly", "no", "--daemonize", "no"],
                                  cwd: directory, logPath: directory + "/redis.log")
        Children.redis.store(pid, ordering: .releasing)
        var version = "redis"
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while true {
            if let status = Processes.exitStatus(pid) {
                Children.redis.store(0, ordering: .releasing)
                throw BenchError("redis-server \(status): \(Files.read(directory + "/redis.log") ?? "")")
            }
            if let v = Self.ping(socketPath) {
                version = v
                break
            }
            if monotonicNanoseconds() > deadline {
                Processes.stop(pid, graceSeconds: 2)
                Children.redis.store(0, ordering: .releasing)
                throw BenchError("redis-server did not answer PING within 10 s")
            }
            blockThread(milliseconds: 20)
        }
        self.version = version
    }

    /// PING, then the server's version from INFO; nil if not ready.
    private static func ping(_ path: String) -> String? {
        guard let fd = try? ClientSocket.connect(path: path, ioTimeoutSeconds: 2) else { return nil }
        defer { ClientSocket.close(fd) }
        func ask(_ command: String) -> String? {
            do throws(BenchError) {
                try ClientSocket.writeAll(fd, Array(command.utf8))
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192, alignment: 1)
                defer { buffer.deallocate() }
                let n = try ClientSocket.read(fd, buffer.baseAddress!, buffer.count)
                return String(decoding: buffer[0..<n], as: UTF8.self)
            } catch {
                return nil
            }
        }
        guard let pong = ask("PING\r\n"), pong.hasPrefix("+PONG") else { return nil }
        let info = ask("INFO server\r\n") ?? ""
        let line = info.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).first { $0.hasPrefix("redis_version:") }
        return line.map { "redis " + $0.dropFirst("redis_version:".count) } ?? "redis"
    }

    /// `redis-benchmark -s SOCK -t ping -c clients -n requests --csv`,
    /// killed after `timeoutSeconds`; `window` is open for its whole run
    /// (its connecting included).
    func benchmark(clients: Int, requests: Int, timeoutSeconds: Double, window: WakeWindow) throws(BenchError) -> Result {
        let out = directory + "/redis-benchmark-c\(clients).csv"
        try Files.write(out, "")
        window.open()
        let cpu0 = Processes.cpuSeconds(self.pid) ?? 0
        let ran = Swift.Result<Void, BenchError> { () throws(BenchError) in
            try runBenchmark(out: out, clients: clients, requests: requests, timeoutSeconds: timeoutSeconds)
        }
        let cpu = (Processes.cpuSeconds(self.pid) ?? 0) - cpu0
        let wakes = window.close()
        try ran.get()
        var result = try Self.parseCSV(Files.read(out) ?? "")
        result.requests = requests * result.all.count  // -t ping runs PING_INLINE and PING_MBULK
        result.serverCPU = cpu
        result.wakes = wakes
        return result
    }

    /// Runs redis-benchmark to its end (its CSV into `out`); throws unless it exited 0.
    private func runBenchmark(out: String, clients: Int, requests: Int, timeoutSeconds: Double) throws(BenchError) {
        let pid = try Processes.spawn(benchmarkBinary, ["-s", socketPath, "-t", "ping", "-c", String(clients),
                                                        "-n", String(requests), "--csv"],
                                      cwd: directory, logPath: out)
        Children.helper.store(pid, ordering: .releasing)
        defer { Children.helper.store(0, ordering: .releasing) }
        guard let status = Processes.waitExit(pid, seconds: timeoutSeconds) else {
            Processes.stop(pid, graceSeconds: 1)
            throw BenchError("redis-benchmark -c \(clients) -n \(requests) did not finish within \(timeoutSeconds) s")
        }
        guard status == "exited 0" else { throw BenchError("redis-benchmark \(status): \(Files.read(out) ?? "")") }
    }

    /// Parses redis-benchmark's --csv output (header line, then one line per test).
    static func parseCSV(_ text: String) throws(BenchError) -> Result {
        let rows = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map { line in
            line.split(separator: ",").map { $0.trimmingQuotes() }
        }
        guard let header = rows.first(where: { $0.first == "test" }),
              let rpsColumn = header.firstIndex(of: "rps") else {
            throw BenchError("redis-benchmark printed no CSV header: \(text)")
        }
        let p50Column = header.firstIndex(of: "p50_latency_ms"), p99Column = header.firstIndex(of: "p99_latency_ms")
        var best: Result?
        var all: [(String, Double)] = []
        for row in rows where row.first != "test" && row.count == header.count {
            guard let rps = Double(row[rpsColumn]) else { continue }
            all.append((row[0], rps))
            if rps > best?.rps ?? -1 {
                best = Result(test: row[0], rps: rps, p50ms: p50Column.flatMap { Double(row[$0]) },
                              p99ms: p99Column.flatMap { Double(row[$0]) }, all: [])
            }
        }
        guard var result = best else { throw BenchError("redis-benchmark printed no result: \(text)") }
        result.all = all
        return result
    }

    /// SIGTERM (SIGKILL after a grace); how it ended.
    func stop() -> String {
        let how = Processes.stop(pid, graceSeconds: 5)
        Children.redis.store(0, ordering: .releasing)
        return how
    }
}

extension Substring {
    func trimmingQuotes() -> String {
        var s = self
        if s.first == "\"" { s = s.dropFirst() }
        if s.last == "\"" { s = s.dropLast() }
        return String(s)
    }
}
