import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The loopd under test: a real child process on a throw-away config (socket
/// and state directory in the run's temp directory, journal fsync on, and
/// the exec action `true` for the `exec1` and `exec16` rows).
final class LoopdProcess {
    let pid: pid_t
    let socketPath: String
    let logPath: String
    let binary: String
    /// Runs with the opt-in spin: registered as `Children.loopdSpin`.
    let spins: Bool
    /// The `[exec] user` its config names (`nobody` when the benchmark runs
    /// as root, else `""`), or nil for a loopd from before `[exec]`, which
    /// refuses the table and runs exec children as its own user, uncontained.
    let execUser: String?

    /// `spinUs`: `server.spin_before_sleeping_us` (nil: loopd's default, no spin).
    /// `wrapper`: a program and its arguments loopd runs under (valgrind),
    /// with `readySeconds` to answer its first ping.
    init(binary: String, directory: String, workers: Int, logLevel: String?, spinUs: Int? = nil,
         wrapper: [String] = [], readySeconds: Double = 15) throws(BenchError) {
        self.binary = binary
        spins = spinUs != nil
        socketPath = directory + "/loopd.sock"
        logPath = directory + "/loopd.log"
        let configPath = directory + "/loopd.toml"
        var config = """
            # Written by LoopdBench for one run.
            [server]
            socket = \(tomlString(socketPath))
            state_dir = \(tomlString(directory + "/state"))
            shutdown_grace_ms = 1000
            \(logLevel.map { "log_level = \(tomlString($0))" } ?? "")
            \(spinUs.map { "spin_before_sleeping_us = \($0)" } ?? "")

            [journal]
            fsync = true

            [actions.true]
            argv = ["/bin/true"]
            allow_users = ["*"]

            """
        for k in 1...workers { config += "\n[[workers]]\nname = \"w\(k)\"\n" }
        // loopd never runs exec children as its own user when it can switch
        // users (root here), and cannot switch otherwise.
        let user = effectiveUserID() == 0 ? "nobody" : ""
        try Files.write(configPath, config + "\n[exec]\nuser = \(tomlString(user))\n")
        if try Self.accepts(binary, configPath: configPath, directory: directory) {
            execUser = user
        } else {
            // A loopd from before `[exec]`: an unknown table to it.
            try Files.write(configPath, config)
            execUser = nil
        }
        let command = wrapper + [binary, "--config", configPath]
        pid = try Processes.spawn(command[0], Array(command.dropFirst()), cwd: directory, logPath: logPath)
        record(pid)
        try waitReady(seconds: readySeconds)
    }

    /// Whether `binary --check-config` accepts the config at `configPath`.
    private static func accepts(_ binary: String, configPath: String, directory: String) throws(BenchError) -> Bool {
        let check = try Processes.spawn(binary, ["--check-config", "--config", configPath], cwd: directory,
                                        logPath: directory + "/check-config.log")
        guard let status = Processes.waitExit(check, seconds: 15) else {
            Processes.stop(check, graceSeconds: 1)
            throw BenchError("\(binary) --check-config did not finish within 15 s")
        }
        return status == "exited 0"
    }

    /// Connects and pings until loopd answers; fails early if it exits.
    private func waitReady(seconds: Double) throws(BenchError) {
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        var lastError = "not started"
        while monotonicNanoseconds() < deadline {
            if let status = Processes.exitStatus(pid) {
                record(0)
                throw BenchError("loopd \(status) at start:\n\(logTail())")
            }
            do throws(BenchError) {
                let connection = try Connection(path: socketPath, ioTimeoutSeconds: 5)
                let reply = try connection.roundTrip(#"{"id":0,"op":"ping"}"#)
                guard reply.hasPrefix(#"{"id":0,"ok":true"#) else { throw BenchError("ping answered \(reply)") }
                return
            } catch {
                lastError = error.description
            }
            blockThread(milliseconds: 20)
        }
        throw BenchError("loopd did not answer a ping within \(seconds) s (\(lastError)):\n\(logTail())")
    }

    /// Registers (or with 0 unregisters) the process for the emergency kill.
    private func record(_ pid: pid_t) {
        if spins {
            Children.loopdSpin.store(pid, ordering: .releasing)
        } else {
            Children.loopd.store(pid, ordering: .releasing)
        }
    }

    /// Throws if loopd has exited.
    func checkAlive() throws(BenchError) {
        if let status = Processes.exitStatus(pid) {
            record(0)
            throw BenchError("loopd \(status) during the run:\n\(logTail())")
        }
    }

    var cpuSeconds: Double { Processes.cpuSeconds(pid) ?? 0 }

    /// Waits (bounded) until no job is queued or running, so one scenario's
    /// left-overs (async submits still running) do not load the next one.
    func waitIdle(seconds: Double) throws(BenchError) {
        let connection = try Connection(path: socketPath, ioTimeoutSeconds: 5)
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        var reply = ""
        while monotonicNanoseconds() < deadline {
            reply = try connection.roundTrip(#"{"id":"idle","op":"stats"}"#)
            if Self.field(reply, "queued") == 0 && Self.field(reply, "running") == 0 { return }
            blockThread(milliseconds: 20)
        }
        throw BenchError("loopd still busy after \(seconds) s: \(reply)")
    }

    /// The integer after `"name":` in a reply line.
    static func field(_ line: String, _ name: String) -> Int? {
        let key = "\"\(name)\":"
        guard let range = line.range(of: key) else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// SIGTERM (SIGKILL after `graceSeconds`); how it ended.
    func stop(graceSeconds: Double = 5) -> String {
        let how = Processes.stop(pid, graceSeconds: graceSeconds)
        record(0)
        return how
    }

    /// The last lines of loopd's log, without the per-job info records.
    func logTail() -> String {
        let lines = (Files.read(logPath) ?? "").split(separator: "\n").filter { !$0.hasPrefix("loopd info: job ") }
        return "  loopd.log, last lines without per-job records:\n"
            + lines.suffix(10).map { "    " + $0 }.joined(separator: "\n")
    }
}

/// A TOML basic string.
private func tomlString(_ s: String) -> String {
    var out = "\""
    for c in s.unicodeScalars {
        switch c {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        default: out.unicodeScalars.append(c)
        }
    }
    return out + "\""
}

extension String {
    /// The first occurrence of `needle` (no Foundation here).
    func range(of needle: String) -> Range<String.Index>? {
        guard !needle.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i...].hasPrefix(needle) { return i..<index(i, offsetBy: needle.count) }
            i = index(after: i)
        }
        return nil
    }
}
