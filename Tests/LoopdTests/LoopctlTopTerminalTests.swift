import Foundation
import Testing
import LoopdProtocol

#if canImport(Glibc)
import Glibc
#endif

// loopctl top as a process: in a real terminal (a tmux pane), and with
// its standard output a pipe. Every wait is for what the screen or the
// pipe shows, bounded only so a broken build cannot hang the suite.

private let tmuxPath = "/usr/bin/tmux"

/// A tmux server of the test's own (its socket in a temporary directory),
/// without any configuration file; `kill()` ends it and its panes.
///
/// tmux runs under `env --default-signal`: a child of Foundation's
/// `Process` inherits the signal mask of the test's thread, which blocks
/// nearly everything, and tmux's server would take that mask and hand it
/// to the panes (its `kill-server` is a SIGTERM to itself). So the pane
/// gets the signals a terminal session has.
/// Starts `argv` with `environment`, its standard streams on /dev/null;
/// the caller reaps it (waitpid).
private func spawnQuietly(_ argv: [String], environment: [String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in [0, 1, 2] {
        posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    let cArgv = argv.map { strdup($0) } + [nil]
    let cEnv = environment.map { strdup($0) } + [nil]
    defer { for p in cArgv + cEnv { free(p) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgv, cEnv)
    guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
    return pid
}

private struct Tmux {
    let socket: String
    /// A UTF-8 client, so capture-pane prints the view's · and ▁ as they are.
    let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color"]

    /// The process that runs `tmux ARGUMENTS` on this server.
    private func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal", tmuxPath, "-S", socket, "-f", "/dev/null"] + arguments
        process.environment = environment
        return process
    }

    /// Runs `tmux ARGUMENTS`; its exit status and standard output.
    @discardableResult
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = process(arguments)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// A detached session `name` of `columns` × `rows` running `loopctl
    /// top ARGUMENTS` under a shell that, once loopctl has exited, prints
    /// `loopctl exited STATUS` on the same terminal and waits for a line:
    /// the pane stays alive, so what loopctl left the terminal in can be
    /// looked at.
    ///
    /// The tmux client that starts the server is spawned and reaped by
    /// pid, not run through Foundation's `Process`: the server, forked from
    /// it, keeps the descriptor by which `Process` learns that its child
    /// ended, so that client would count as running for as long as the
    /// server does. The session's existence is then waited for.
    func start(_ name: String, columns: Int, rows: Int, loopctl: URL, _ arguments: [String]) throws {
        let command = ([loopctl.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let script = "\(command); echo \"loopctl exited $?\"; read line"
        let argv = ["/usr/bin/env", "--default-signal", tmuxPath, "-S", socket, "-f", "/dev/null",
                    "new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)", script]
        let pid = try spawnQuietly(argv, environment: environment.map { "\($0.key)=\($0.value)" })
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let deadline = Date().addingTimeInterval(30)
        while try run(["has-session", "-t", name]).status != 0 {
            try #require(Date() < deadline, "tmux did not start session \(name)")
            usleep(50_000)
        }
    }

    /// The pane's lines; `joined` joins the lines the terminal wrapped, so
    /// a line written wider than the pane shows as one long line.
    func capture(_ name: String, joined: Bool = false) throws -> [String] {
        try run(["capture-pane", "-p"] + (joined ? ["-J"] : []) + ["-t", name]).output
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// A tmux format of the pane, such as `#{alternate_on}`.
    func display(_ name: String, _ format: String) throws -> String {
        try run(["display-message", "-p", "-t", name, format]).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits (bounded) until the pane's lines satisfy `condition`; the
    /// lines last seen.
    func waitForPane(_ name: String, joined: Bool = false, _ condition: ([String]) -> Bool) throws -> [String] {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            lines = try capture(name, joined: joined)
            if condition(lines) { return lines }
            usleep(50_000)
        }
        return lines
    }

    /// Waits (bounded) until session `name` is gone; whether it went.
    func waitUntilGone(_ name: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if try run(["has-session", "-t", name]).status != 0 { return true }
            usleep(50_000)
        }
        return false
    }

    func kill() { _ = try? run(["kill-server"]) }
}

/// The pid of a child of process `parent` (the pane's shell runs loopctl
/// as its one child), read from /proc.
private func childProcess(of parent: pid_t) -> pid_t? {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for entry in entries {
        guard let pid = pid_t(entry),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        // After the command: state, then the parent's pid.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        if fields.count > 1, pid_t(fields[1]) == parent { return pid }
    }
    return nil
}

@Suite("loopctl top in a terminal")
struct LoopctlTopTerminalTests {
    @Test("in a real terminal: the worker table and a running job's id and action; w filters; a resize redraws within the width; q exits 0 and gives the terminal back",
          .enabled(if: FileManager.default.isExecutableFile(atPath: tmuxPath), "tmux is not installed at \(tmuxPath)"))
    func liveViewInATerminal() throws {
        let loopctl = try #require(LoopctlBinary.url(), "no loopctl next to the test bundle")
        let d = RunningDaemon()
        defer { d.stop() }
        let tmux = Tmux(socket: d.directory + "/tmux.sock")
        defer { tmux.kill() }
        try tmux.start("top", columns: 120, rows: 40, loopctl: loopctl, ["top", "--socket", d.socketPath, "--interval", "0.2"])

        var pane = try tmux.waitForPane("top") { $0.contains { $0.hasPrefix("NAME") && $0.contains("QUEUED") } }
        #expect(pane.contains { $0.hasPrefix("NAME  MODE") && $0.contains("RUNNING") && $0.contains("LOOP") }, "\(pane)")
        #expect(try tmux.display("top", "#{alternate_on}") == "1", "the view is on the alternate screen")

        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["60000"],"worker":"w1","wait":false}"#)?["job"]?.stringValue)
        defer { _ = c.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#) }
        pane = try tmux.waitForPane("top") { lines in lines.contains { $0.hasPrefix("w1") && $0.contains(job) && $0.contains("sleep") } }
        #expect(pane.contains { $0.hasPrefix("w1") && $0.contains(job) && $0.contains("sleep") }, "the worker row: \(pane)")
        #expect(pane.contains { $0.hasPrefix(job) && $0.contains("w1") && $0.contains("sleep") }, "the running job: \(pane)")

        try tmux.run(["send-keys", "-t", "top", "w"])
        pane = try tmux.waitForPane("top") { $0.contains { $0.hasPrefix("Workers (1 of 2)") } }
        #expect(pane.contains { $0.hasPrefix("Workers (1 of 2)") } && !pane.contains { $0.hasPrefix("w2 ") }, "\(pane)")

        // Smaller, then the keys shown: a line wider than the pane would wrap.
        try tmux.run(["resize-window", "-t", "top", "-x", "60", "-y", "20"])
        try tmux.run(["send-keys", "-t", "top", "?"])
        pane = try tmux.waitForPane("top", joined: true) { $0.contains { $0.hasPrefix("q quit") } }
        #expect(pane.contains { $0.hasPrefix("q quit") }, "\(pane)")
        let widest = pane.map(\.count).max() ?? 0
        #expect(widest <= 60, "a line of \(widest) characters in a 60-column terminal: \(pane)")
        #expect(pane.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count <= 20)
        #expect(pane.contains { $0.hasPrefix("sort: duration · worker: w1") }, "the key line stays on a short screen: \(pane)")

        try tmux.run(["send-keys", "-t", "top", "q"])
        pane = try tmux.waitForPane("top") { $0.contains { $0.hasPrefix("loopctl exited") } }
        #expect(pane.contains { $0.trimmingCharacters(in: .whitespaces) == "loopctl exited 0" }, "\(pane)")
        #expect(try tmux.display("top", "#{alternate_on} #{cursor_flag}") == "0 1", "the main screen and the cursor are back")
        try tmux.run(["send-keys", "-t", "top", "Enter"])
        #expect(try tmux.waitUntilGone("top"), "the session ends with its shell")
    }

    @Test("in a real terminal: SIGTERM, and a daemon that goes away, give the terminal back; the lost connection's reason is printed after",
          .enabled(if: FileManager.default.isExecutableFile(atPath: tmuxPath), "tmux is not installed at \(tmuxPath)"))
    func terminalRestoredOnSignalAndLostConnection() throws {
        let loopctl = try #require(LoopctlBinary.url(), "no loopctl next to the test bundle")
        let d = RunningDaemon()
        var stopped = false
        defer { if !stopped { d.stop() } }
        let tmux = Tmux(socket: d.directory + "/tmux.sock")
        defer { tmux.kill() }
        let arguments = ["top", "--socket", d.socketPath, "--interval", "0.2"]
        try tmux.start("term", columns: 100, rows: 30, loopctl: loopctl, arguments)
        try tmux.start("lost", columns: 100, rows: 30, loopctl: loopctl, arguments)
        for name in ["term", "lost"] {
            let pane = try tmux.waitForPane(name) { $0.contains { $0.hasPrefix("NAME") } }
            #expect(pane.contains { $0.hasPrefix("NAME") }, "\(name): \(pane)")
        }

        let shell = try #require(pid_t(try tmux.display("term", "#{pane_pid}")))
        let top = try #require(childProcess(of: shell), "no loopctl under the pane's shell \(shell)")
        #expect(kill(top, SIGTERM) == 0)
        var pane = try tmux.waitForPane("term") { $0.contains { $0.hasPrefix("loopctl exited") } }
        #expect(pane.contains { $0.trimmingCharacters(in: .whitespaces) == "loopctl exited 0" }, "\(pane)")
        #expect(try tmux.display("term", "#{alternate_on} #{cursor_flag}") == "0 1")

        d.stop()
        stopped = true
        pane = try tmux.waitForPane("lost") { $0.contains { $0.hasPrefix("loopctl exited") } }
        #expect(pane.contains { $0.trimmingCharacters(in: .whitespaces) == "loopctl exited 4" }, "\(pane)")
        let reason = pane.firstIndex { $0.hasPrefix("loopctl exited") }.flatMap { $0 > 0 ? pane[$0 - 1] : nil }
        #expect(reason?.hasPrefix("loopctl: ") == true, "the reason, on the main screen: \(pane)")
        #expect(try tmux.display("lost", "#{alternate_on} #{cursor_flag}") == "0 1")
    }

    @Test("standard output a pipe: --iterations 2 prints two plain frames, a blank line between, no escape byte, exit 0")
    func plainFramesToAPipe() throws {
        let loopctl = try #require(LoopctlBinary.url(), "no loopctl next to the test bundle")
        let d = RunningDaemon()
        defer { d.stop() }
        let process = Process()
        process.executableURL = loopctl
        process.arguments = ["top", "--socket", d.socketPath, "--interval", "0.1", "--iterations", "2"]
        process.environment = ["PATH": "/usr/bin:/bin", "TERM": "xterm-256color"]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(!bytes.contains(0x1B), "no escape byte")
        let frames = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n\n")
        #expect(frames.count == 2, "\(frames)")
        for frame in frames {
            let lines = frame.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("loopd \(LoopdVersion.current) · ") == true, "\(frame)")
            #expect(lines.contains("Workers (2)") && lines.contains { $0.hasPrefix("NAME  MODE") }, "\(frame)")
            #expect(lines.contains { $0.hasPrefix("Running jobs (0") } && lines.contains { $0.hasPrefix("Failures (0") }, "\(frame)")
        }
        #expect(frames.last?.split(separator: "\n").contains { $0.hasPrefix("throughput  0.0/s") } == true,
                "the second frame has a rate: \(frames)")
    }

    @Test("standard output a pipe whose reader goes away (loopctl top | head): the view stops, exit 0")
    func stopsWhenTheReaderGoes() throws {
        let loopctl = try #require(LoopctlBinary.url(), "no loopctl next to the test bundle")
        let d = RunningDaemon()
        defer { d.stop() }
        let process = Process()
        process.executableURL = loopctl
        process.arguments = ["top", "--socket", d.socketPath, "--interval", "0.1"]
        process.environment = ["PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let first = output.fileHandleForReading.availableData
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("loopd "))
        try output.fileHandleForReading.close()

        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }
}
