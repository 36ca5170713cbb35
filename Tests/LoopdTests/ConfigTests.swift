import LoopPlatform
import Testing
@testable import LoopdCore

/// The repository root, found from this file so the tests read the real config files.
private let repoRoot: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)  // Tests/LoopdTests/ConfigTests.swift
    return parts.joined(separator: "/")
}()

/// The smallest valid config: everything else takes its default.
private let minimal = """
    [[workers]]
    name = "w1"

    """

private func parse(_ text: String) throws(ConfigError) -> DaemonConfig {
    try ConfigLoader.parse(text, origin: "<test>")
}

// MARK: - The shipped files

@Suite("Config files in the repository")
struct ConfigFileTests {
    @Test("Config/loopd.toml parses to what its comments say")
    func defaultFile() throws {
        let config = try ConfigLoader.load(path: "\(repoRoot)/Config/loopd.toml")

        // The file shows every default; if the code's defaults drift from the
        // documentation, these fail.
        #expect(config.server == DaemonConfig.Server())
        #expect(config.limits == DaemonConfig.Limits())
        #expect(config.journal == DaemonConfig.Journal())
        #expect(config.quotas == DaemonConfig.Quotas())
        // Every [exec] default but the user: a checkout runs children as nobody.
        var exec = DaemonConfig.ExecDefaults()
        exec.user = "nobody"
        #expect(config.exec == exec)

        #expect(config.server.socketPath == "loopd.sock")
        #expect(config.server.socketMode == 0o660)
        #expect(config.server.socketGroup == nil)
        #expect(config.server.stateDirectory == "state")
        #expect(config.server.debugActions == false)
        #expect(config.limits.maxLineBytes == 65_536)
        #expect(config.workers == [DaemonConfig.Worker(name: "w1"), DaemonConfig.Worker(name: "w2")])
        // The [fleet] table is shown commented out: a checkout is a host of its own.
        #expect(config.fleet == nil)

        #expect(Set(config.actions.keys) == ["date", "uname", "printf"])
        var date = DaemonConfig.Exec(argv: ["/bin/date", "-u"])
        date.timeoutMs = 5_000
        #expect(config.actions["date"] == DaemonConfig.Action(allowUsers: [], allowAnyUser: true, exec: date))
        #expect(config.actions["uname"]?.exec?.argv == ["/bin/uname", "-a"])

        var printf = DaemonConfig.Exec(argv: ["/usr/bin/printf", "%s\n"])
        printf.maxClientArgs = 8
        printf.env = ["LC_ALL": "C.UTF-8"]
        printf.cwd = "/"
        printf.timeoutMs = 5_000
        printf.killGraceMs = 1_000
        printf.outputCapBytes = 4_096
        #expect(config.actions["printf"] == DaemonConfig.Action(exec: printf))

        // The policy the comments promise.
        #expect(config.permits(action: "date", uid: 1000, gid: 1000, daemonUID: 999))
        #expect(config.permits(action: "echo", uid: 1000, gid: 1000, daemonUID: 999))
        #expect(!config.permits(action: "printf", uid: 1000, gid: 1000, daemonUID: 999))
        #expect(config.permits(action: "printf", uid: 999, gid: 999, daemonUID: 999))
    }

    @Test("Config/loopd.production.toml parses with the installed paths")
    func productionFile() throws {
        let config = try ConfigLoader.load(path: "\(repoRoot)/Config/loopd.production.toml")
        #expect(config.server.socketPath == "/run/loopd.sock")
        #expect(config.server.stateDirectory == "/var/lib/loopd")
        #expect(config.server.debugActions == false)
        #expect(config.journal.fsync)
        #expect(config.journal.retentionSeconds == 604_800)
        #expect(config.workers.map(\.name) == ["w1", "w2", "ops"])
        #expect(config.workers.last?.mode == "maintenance")
        // The maintenance lane takes only jobs that name it: any and key never strand work there.
        #expect(config.workers.map(\.placement) == [.auto, .auto, .explicit])
        #expect(config.actions["printf"]?.allowGroups == [4])  // adm is gid 4 on Debian
    }

    @Test("the exec examples name programs that exist on Debian")
    func examplesExist() throws {
        let config = try ConfigLoader.load(path: "\(repoRoot)/Config/loopd.toml")
        for (name, action) in config.actions {
            let program = try #require(action.exec?.argv.first, "\(name)")
            #expect(FileSystem.isReadable(program), "\(name): \(program)")
        }
    }

    @Test("a missing file is reported with its path")
    func missingFile() {
        #expect(throws: ConfigError.unreadable(origin: "/nonexistent/loopd.toml", reason: "No such file or directory")) {
            try ConfigLoader.load(path: "/nonexistent/loopd.toml")
        }
    }

    @Test("the default path prefers the checkout's file")
    func defaultPath() {
        // The tests run from the repository root (swift test), where Config/loopd.toml exists.
        let expected = FileSystem.isReadable(ConfigLoader.checkoutPath)
            ? ConfigLoader.checkoutPath : ConfigLoader.installedPath
        #expect(ConfigLoader.defaultPath() == expected)
    }
}

// MARK: - Valid settings

@Suite("Config parsing")
struct ConfigParseTests {
    @Test("a config with only a worker takes every default")
    func minimalConfig() throws {
        var expected = DaemonConfig()
        expected.workers = [DaemonConfig.Worker(name: "w1")]
        #expect(try parse(minimal) == expected)
    }

    @Test("server.spin_before_sleeping_us takes 0 (off, the default) to 10000 microseconds")
    func spinBeforeSleeping() throws {
        #expect(try parse(minimal).server.spinBeforeSleepingUs == 0)
        for us: Int64 in [0, 1, 50, 10_000] {
            #expect(try parse(minimal + "[server]\nspin_before_sleeping_us = \(us)\n").server.spinBeforeSleepingUs == us)
        }
    }

    @Test("inline tables, octal modes and group names")
    func variants() throws {
        let config = try parse(
            """
            limits = { max_line_bytes = 1024 }
            [server]
            socket_mode = "600"
            socket_group = "root"
            [[workers]]
            name = "a.b-c_9"
            mode = "maintenance"
            """)
        #expect(config.limits.maxLineBytes == 1024)
        #expect(config.server.socketMode == 0o600)
        #expect(config.server.socketGroup == "root")
        #expect(config.server.socketGroupID == 0)
        #expect(config.workers == [DaemonConfig.Worker(name: "a.b-c_9", mode: "maintenance")])
    }

    @Test("allow lists take names, ids and \"*\"")
    func allowLists() throws {
        let config = try parse(
            minimal + """
                [actions.echo]
                allow_users = ["root", 1000]
                allow_groups = ["root", 50]
                [actions.stall]
                allow_users = ["*"]
                [actions.x]
                argv = ["/bin/true"]
                allow_groups = []
                """)
        #expect(config.actions["echo"] == DaemonConfig.Action(allowUsers: [0, 1000], allowGroups: [0, 50]))
        #expect(config.actions["stall"] == DaemonConfig.Action(allowUsers: [], allowAnyUser: true))
        #expect(config.actions["x"]?.allowGroups == [])
        #expect(config.actions["x"]?.allowUsers == nil)
        #expect(config.actions["x"]?.exec == DaemonConfig.Exec(argv: ["/bin/true"]))
    }

    @Test("[exec] and an exec action's containment keys: users, byte sizes with suffixes, a CPU percentage")
    func containmentKeys() throws {
        let config = try parse(minimal + """
            [exec]
            user = 65534
            cgroup = "off"
            landlock = "off"
            output_drain_ms = 0
            [actions.build]
            argv = ["/usr/bin/make"]
            user = "nobody"
            group = "nogroup"
            tasks_max = 64
            memory_max = "512M"
            cpu_max = "150%"
            limit_nofile = 256
            limit_cpu_seconds = 60
            limit_address_space = 4294967296
            """)
        #expect(config.exec.user == "65534")
        #expect(config.exec.cgroup == .off && config.exec.landlock == .off && config.exec.outputDrainMs == 0)
        let build = try #require(config.actions["build"]?.exec)
        #expect(build.user == "nobody" && build.group == "nogroup")
        #expect(build.tasksMax == 64 && build.memoryMaxBytes == 512 << 20 && build.cpuMaxPercent == 150)
        #expect(build.limitNofile == 256 && build.limitCPUSeconds == 60 && build.limitAddressSpaceBytes == 4 << 30)
        let plain = try parse(minimal + "[actions.x]\nargv = [\"/bin/true\"]\ncpu_max = 50\nmemory_max = 1048576\n")
        #expect(plain.actions["x"]?.exec?.cpuMaxPercent == 50 && plain.actions["x"]?.exec?.memoryMaxBytes == 1_048_576)
        #expect(plain.actions["x"]?.exec?.user == nil, "an action without a user takes [exec] user when loopd starts")
    }

    @Test("NUL escapes are caught only where TOML reads them as escapes")
    func nulEscapesOnlyInBasicStrings() throws {
        // In literal strings, after an escaped backslash, and in comments,
        // `\u0000` is plain text and must arrive unchanged.
        let config = try parse(
            minimal + #"""
                # a comment with \u0000
                [actions.x]
                argv = ["/bin/echo", '\u0000', "\\u0000", """a\\U00000000"""]
                """#)
        #expect(config.actions["x"]?.exec?.argv == ["/bin/echo", #"\u0000"#, #"\u0000"#, #"a\U00000000"#])
    }

    @Test("a syntax error carries line and column")
    func syntaxError() {
        do {
            _ = try parse("[[workers]]\nname = \n")
            Issue.record("parsed")
        } catch {
            guard case .syntax(let origin, let line, _, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(origin == "<test>")
            #expect(line == 2)
            #expect(error.description.hasPrefix("<test>:2:"))
        }
    }

    @Test("the message names the file and the key, and quotes the bad value")
    func messageFormat() {
        do {
            _ = try ConfigLoader.parse(minimal + "[limits]\nmax_line_bytes = \"abc\"\n", origin: "/etc/loopd/loopd.toml")
            Issue.record("parsed")
        } catch {
            #expect(
                error.description
                    == #"/etc/loopd/loopd.toml: limits.max_line_bytes: must be an integer between 256 and 16777216, got "abc""#
            )
        }
    }

    @Test("a typo gets a suggestion")
    func suggestion() {
        do {
            _ = try parse(minimal + "[limits]\nmax_line_byte = 1024\n")
            Issue.record("parsed")
        } catch {
            #expect(error.key == "limits.max_line_byte")
            #expect(error.description.contains(#"did you mean "max_line_bytes"?"#))
        }
    }
}

// MARK: - Invalid settings

/// One bad config, the key path its error must name, and a phrase the message must contain.
struct InvalidConfig: Sendable, CustomTestStringConvertible {
    let toml: String
    let key: String
    let phrase: String
    init(_ toml: String, key: String, _ phrase: String) {
        self.toml = toml
        self.key = key
        self.phrase = phrase
    }
    var testDescription: String { key }

    /// Most cases are the minimal config plus some lines.
    static func adding(_ lines: String, key: String, _ phrase: String) -> InvalidConfig {
        InvalidConfig(minimal + lines, key: key, phrase)
    }
}

private let tooManyWorkers = (0...256).map { "[[workers]]\nname = \"w\($0)\"\n" }.joined()

private let invalidConfigs: [InvalidConfig] = [
    // Unknown tables and keys: typos must not silently keep a default.
    .adding("[serverr]\n", key: "serverr", #"did you mean "server"?"#),
    .adding("[server]\nsockett = \"x\"\n", key: "server.sockett", "unknown key"),
    .adding("[journal]\nretention = 5\n", key: "journal.retention", "unknown key"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\ntimeout = 5\n", key: "actions.x.timeout", #"did you mean "timeout_ms"?"#),
    // (Top-level keys must come before the first table header.)
    InvalidConfig("server = 5\n" + minimal, key: "server", "must be a table, got 5"),
    // Wrong types and out-of-range numbers.
    .adding("[limits]\nmax_line_bytes = \"abc\"\n", key: "limits.max_line_bytes", #"between 256 and 16777216, got "abc""#),
    .adding("[limits]\nmax_line_bytes = 100\n", key: "limits.max_line_bytes", "got 100"),
    .adding("[limits]\nmax_connections = 0\n", key: "limits.max_connections", "between 1 and 100000"),
    .adding("[limits]\nmax_queued_jobs_per_worker = -1\n", key: "limits.max_queued_jobs_per_worker", "got -1"),
    .adding("[limits]\nmax_pending_reply_bytes = 1.5\n", key: "limits.max_pending_reply_bytes", "got 1.5"),
    // Exec containment.
    .adding("[exec]\ncgroup = \"sometimes\"\n", key: "exec.cgroup", #"must be "auto" or "off""#),
    .adding("[exec]\nlandlock = true\n", key: "exec.landlock", "must be a string"),
    .adding("[exec]\noutput_drain_ms = 60001\n", key: "exec.output_drain_ms", "between 0 and 60000"),
    .adding("[exec]\nusr = \"nobody\"\n", key: "exec.usr", #"did you mean "user"?"#),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nuser = \"\"\n", key: "actions.x.user", "must not be empty"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nmemory_max = \"12Q\"\n", key: "actions.x.memory_max", #"with a suffix K, M, G or T"#),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nmemory_max = \"1K\"\n", key: "actions.x.memory_max", "between 1048576"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\ncpu_max = \"fast\"\n", key: "actions.x.cpu_max", "percentage of one CPU"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nlimit_nofile = 2\n", key: "actions.x.limit_nofile", "between 3 and 1048576"),
    .adding("[actions.echo]\nuser = \"nobody\"\n", key: "actions.echo.user", "unknown key for the built-in action"),
    // Retries and unique keys (submit's retries, retry_backoff_ms, unique_key).
    .adding("[limits]\nmax_retries = 1001\n", key: "limits.max_retries", "between 0 and 1000, got 1001"),
    .adding("[limits]\nmax_retries = -1\n", key: "limits.max_retries", "got -1"),
    .adding("[limits]\nmax_retry_backoff_ms = 0\n", key: "limits.max_retry_backoff_ms", "between 1 and 86400000, got 0"),
    .adding("[limits]\nmax_unique_key_bytes = 4097\n", key: "limits.max_unique_key_bytes", "between 1 and 4096, got 4097"),
    .adding("[limits]\nmax_unique_key_bytes = \"256\"\n", key: "limits.max_unique_key_bytes", #"got "256""#),
    // Per-uid quotas and the per-pass share of a connection.
    .adding("[limits]\nmax_requests_per_pass = 0\n", key: "limits.max_requests_per_pass", "between 1 and 65536, got 0"),
    .adding("[quotas]\nmax_jobs = 0\n", key: "quotas.max_jobs", "between 1 and 100000000, got 0"),
    .adding("[quotas]\nmax_arg_bytes = 100\n", key: "quotas.max_arg_bytes", "got 100"),
    .adding("[quotas]\nmax_durable_retained_bytes = \"1M\"\n", key: "quotas.max_durable_retained_bytes", #"got "1M""#),
    .adding("[quotas]\nmax_connections = 100001\n", key: "quotas.max_connections", "between 1 and 100000"),
    .adding("[quotas]\nmax_waits = -1\n", key: "quotas.max_waits", "got -1"),
    .adding("[quotas]\nmax_job = 5\n", key: "quotas.max_job", "unknown key"),
    .adding("[server]\ndebug_actions = \"yes\"\n", key: "server.debug_actions", "true or false"),
    .adding("[server]\nstall_threshold_ms = 0\n", key: "server.stall_threshold_ms", "between 100 and"),
    .adding("[server]\nshutdown_grace_ms = -1\n", key: "server.shutdown_grace_ms", "got -1"),
    .adding("[server]\nspin_before_sleeping_us = -1\n", key: "server.spin_before_sleeping_us", "between 0 and 10000, got -1"),
    .adding("[server]\nspin_before_sleeping_us = 10001\n", key: "server.spin_before_sleeping_us", "got 10001"),
    .adding("[server]\nspin_before_sleeping_us = \"50\"\n", key: "server.spin_before_sleeping_us", #"got "50""#),
    .adding("[server]\nspin_before_sleeping_us = 0.05\n", key: "server.spin_before_sleeping_us", "got 0.05"),
    .adding("[server]\nspin_before_sleeping = 50\n", key: "server.spin_before_sleeping", #"did you mean "spin_before_sleeping_us"?"#),
    .adding("[journal]\nfsync = 1\n", key: "journal.fsync", "true or false, got 1"),
    // Dates, times and special floats are quoted back as written.
    .adding("[server]\nsocket = 1979-05-27 07:32:00z\n", key: "server.socket", "must be a string, got an offset date-time (1979-05-27 07:32:00z)"),
    .adding("[server]\nstate_dir = 07:32:00.50\n", key: "server.state_dir", "got a local time (07:32:00.50)"),
    .adding("[journal]\nfsync = 2024-02-29\n", key: "journal.fsync", "got a local date (2024-02-29)"),
    .adding("[journal]\nretention_seconds = 1979-05-27t00:32:00\n", key: "journal.retention_seconds", "got a local date-time (1979-05-27t00:32:00)"),
    .adding("[limits]\nmax_line_bytes = -inf\n", key: "limits.max_line_bytes", "got -inf"),
    .adding("[journal]\nretention_seconds = -5\n", key: "journal.retention_seconds", "got -5"),
    // The socket.
    .adding("[server]\nsocket_mode = \"0999\"\n", key: "server.socket_mode", "octal string"),
    .adding("[server]\nsocket_mode = \"01777\"\n", key: "server.socket_mode", #"got "01777""#),
    .adding("[server]\nsocket_mode = 660\n", key: "server.socket_mode", "write it quoted"),
    .adding("[server]\nsocket_mode = \"\"\n", key: "server.socket_mode", "octal string"),
    .adding("[server]\nsocket = \"\"\n", key: "server.socket", "must not be empty"),
    .adding("[server]\nsocket = \"/\(String(repeating: "s", count: 107))\"\n", key: "server.socket", "at most 107 bytes"),
    .adding("[server]\nsocket_group = \"no-such-group-loopd\"\n", key: "server.socket_group", "no group named"),
    .adding("[server]\nstate_dir = \"\"\n", key: "server.state_dir", "must not be empty"),
    // Workers.
    InvalidConfig("", key: "workers", "at least one"),
    InvalidConfig("workers = []\n", key: "workers", "between 1 and 256 workers, got 0"),
    InvalidConfig("[workers]\nname = \"w1\"\n", key: "workers", "array of tables"),
    InvalidConfig(tooManyWorkers, key: "workers", "got 257"),
    .adding("[[workers]]\nname = \"w1\"\n", key: "workers[1].name", #"duplicate worker name "w1" (also workers[0])"#),
    InvalidConfig("[[workers]]\nname = \"w 1\"\n", key: "workers[0].name", "1 to 64 of"),
    InvalidConfig("[[workers]]\nname = \"\(String(repeating: "w", count: 65))\"\n", key: "workers[0].name", "1 to 64"),
    InvalidConfig("[[workers]]\nname = \"any\"\n", key: "workers[0].name", "reserved"),
    InvalidConfig("[[workers]]\nmode = \"default\"\n", key: "workers[0].name", "required"),
    InvalidConfig("[[workers]]\nname = 1\n", key: "workers[0].name", "must be a string, got 1"),
    InvalidConfig("[[workers]]\nname = \"w1\"\nmode = \"\"\n", key: "workers[0].mode", "1 to 64"),
    InvalidConfig("[[workers]]\nname = \"w1\"\nmode = \"common\"\n", key: "workers[0].mode", "pseudo-mode"),
    InvalidConfig("[[workers]]\nname = \"w1\"\nmodes = [\"a\"]\n", key: "workers[0].modes", #"did you mean "mode"?"#),
    // Exec actions.
    .adding("[actions.x]\nargv = []\n", key: "actions.x.argv", "must not be empty"),
    .adding("[actions.x]\nargv = \"/bin/true\"\n", key: "actions.x.argv", "array of strings"),
    .adding("[actions.x]\nargv = [\"true\"]\n", key: "actions.x.argv[0]", "absolute path"),
    .adding("[actions.x]\nargv = [\"/bin/echo\", 5]\n", key: "actions.x.argv[1]", "got 5"),
    .adding("[actions.x]\nargv = [\"/bin/echo\", \"a\\u0000b\"]\n", key: "actions.x.argv[1]", "NUL"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nenv = { \"A=B\" = \"1\" }\n", key: "actions.x.env.\"A=B\"", "\"=\""),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nenv = { \"\" = \"1\" }\n", key: "actions.x.env.\"\"", "non-empty"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nenv = { \"A\\u0000B\" = \"1\" }\n", key: "actions.x.env.\"A\\u0000B\"", "NUL"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nenv = { A = \"1\\U00000000\" }\n", key: "actions.x.env.A", "NUL"),
    // `\u0000` is valid TOML and arrives as a real NUL; every reader refuses it by key.
    .adding("[actions.\"a\\u0000b\"]\nargv = [\"/bin/true\"]\n", key: "actions.\"a\\u0000b\"", "keys must not contain NUL"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\ncwd = \"\"\"/tmp\\u0000\"\"\"\n", key: "actions.x.cwd", "must not contain NUL (\\u0000)"),
    InvalidConfig("[[workers]]\nname = \"w\\u0000\"\n", key: "workers[0].name", "must not contain NUL (\\u0000)"),
    .adding("[server]\nsocket = \"a\\U00000000\"\n", key: "server.socket", "must not contain NUL (\\u0000)"),
    .adding("[limits]\n\"max\\u0000\" = 1\n", key: "limits.\"max\\u0000\"", "unknown key"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nenv = { A = 1 }\n", key: "actions.x.env.A", "must be a string"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nenv = \"A=1\"\n", key: "actions.x.env", "must be a table"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\ncwd = \"tmp\"\n", key: "actions.x.cwd", "absolute path"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\ntimeout_ms = 0\n", key: "actions.x.timeout_ms", "got 0"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\ntimeout_ms = -1000\n", key: "actions.x.timeout_ms", "got -1000"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nkill_grace_ms = 0\n", key: "actions.x.kill_grace_ms", "got 0"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\noutput_cap_bytes = 16777217\n", key: "actions.x.output_cap_bytes", "got 16777217"),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\nmax_client_args = 1000\n", key: "actions.x.max_client_args", "between 0 and 256"),
    // Built-ins versus exec actions.
    .adding("[actions.echo]\nargv = [\"/bin/echo\"]\n", key: "actions.echo.argv", "built-in action and cannot be redefined"),
    .adding("[actions.sleep]\ntimeout_ms = 5\n", key: "actions.sleep.timeout_ms", "for the built-in action \"sleep\"; expected one of: allow_users, allow_groups"),
    .adding("[actions.foo]\nallow_users = [\"*\"]\n", key: "actions.foo.argv", "not a built-in action"),
    .adding("[actions.\"bad name\"]\nargv = [\"/bin/true\"]\n", key: "actions.\"bad name\"", "action names must be"),
    .adding("[actions]\nx = 5\n", key: "actions.x", "must be a table, got 5"),
    // Allow lists.
    .adding("[actions.echo]\nallow_users = [\"no-such-user-loopd\"]\n", key: "actions.echo.allow_users[0]", "no user named"),
    .adding("[actions.echo]\nallow_groups = [0, \"no-such-group-loopd\"]\n", key: "actions.echo.allow_groups[1]", "no group named"),
    .adding("[actions.echo]\nallow_users = [\"*\", \"root\"]\n", key: "actions.echo.allow_users[0]", "only entry"),
    .adding("[actions.echo]\nallow_groups = [\"*\"]\n", key: "actions.echo.allow_groups[0]", "not a group"),
    .adding("[actions.echo]\nallow_users = [-1]\n", key: "actions.echo.allow_users[0]", "got -1"),
    .adding("[actions.echo]\nallow_users = [4294967295]\n", key: "actions.echo.allow_users[0]", "4294967294"),
    .adding("[actions.echo]\nallow_users = [\"\"]\n", key: "actions.echo.allow_users[0]", "must not be empty"),
    .adding("[actions.echo]\nallow_users = \"root\"\n", key: "actions.echo.allow_users", "must be an array"),
    // Schedules: what would fail at its first slot fails at load.
    .adding("[schedules.s]\nevery = \"1h\"\n", key: "schedules.s.action", "required"),
    .adding("[schedules.s]\naction = \"backup\"\nevery = \"1h\"\n", key: "schedules.s.action", #"no action named "backup""#),
    .adding("[schedules.s]\naction = \"noop\"\n", key: "schedules.s.every", "required"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1h\"\ncron = \"* * * * *\"\n", key: "schedules.s.cron", "not both"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"500ms\"\n", key: "schedules.s.every", "at least 1s"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"5 minutes\"\n", key: "schedules.s.every", "5 minutes"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1h\"\nzone = \"UTC\"\n", key: "schedules.s.zone", "only a cron schedule"),
    .adding("[schedules.s]\naction = \"noop\"\ncron = \"0 9 * * *\"\nzone = \"Europe/Berlin\"\n", key: "schedules.s.zone", #"must be "UTC" or "local""#),
    .adding("[schedules.s]\naction = \"noop\"\ncron = \"61 * * * *\"\n", key: "schedules.s.cron", "minute"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1m\"\njitter = \"1m\"\n", key: "schedules.s.jitter", "shorter than the schedule's period"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1m\"\ncatch_up = \"some\"\n", key: "schedules.s.catch_up", #"must be "one", "all" or "none""#),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1m\"\noverlap = \"wait\"\n", key: "schedules.s.overlap", "cancel_previous"),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1m\"\nworker = \"w9\"\n", key: "schedules.s.worker", #"no worker named "w9""#),
    .adding("[schedules.s]\naction = \"noop\"\nevery = \"1m\"\nevry = 1\n", key: "schedules.s.evry", #"did you mean "every"?"#),
    .adding("[actions.x]\nargv = [\"/bin/true\"]\n[schedules.s]\naction = \"x\"\nevery = \"1m\"\nargs = [\"a\"]\n", key: "schedules.s.args", "max_client_args"),
    .adding("[schedules.\"a b\"]\naction = \"noop\"\nevery = \"1m\"\n", key: "schedules.\"a b\"", "schedule names"),
]

@Suite("Config rejects every invalid setting, naming its key")
struct ConfigRejectionTests {
    @Test(arguments: invalidConfigs)
    func rejected(_ bad: InvalidConfig) {
        do {
            let config = try parse(bad.toml)
            Issue.record("accepted: \(config)")
        } catch {
            #expect(error.key == bad.key, "\(error)")
            #expect(error.description.hasPrefix("<test>: \(bad.key): "), "\(error)")
            #expect(error.description.contains(bad.phrase), "\(error)")
        }
    }

    @Test("there are at least 20 invalid cases")
    func enoughCases() {
        #expect(invalidConfigs.count >= 20)
    }
}

// MARK: - Who may run what

@Suite("Action policy")
struct ActionPolicyTests {
    static let daemon: UInt32 = 999
    static let alice: UInt32 = 1000

    private func config(_ actions: String = "") throws -> DaemonConfig {
        try parse(minimal + actions)
    }

    @Test("by default echo, noop, sleep and fail are open to anyone who can connect")
    func openBuiltins() throws {
        let c = try config()
        for action in ["echo", "noop", "sleep", "fail"] {
            #expect(c.permits(action: action, uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
        }
    }

    @Test("by default stall, exec actions and unknown names are for root and the daemon's uid only")
    func closedByDefault() throws {
        let c = try config("[actions.x]\nargv = [\"/bin/true\"]\n")
        for action in ["stall", "x", "registered-in-code"] {
            #expect(!c.permits(action: action, uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
            #expect(c.permits(action: action, uid: 0, gid: 0, daemonUID: Self.daemon))
            #expect(c.permits(action: action, uid: Self.daemon, gid: Self.daemon, daemonUID: Self.daemon))
        }
    }

    @Test("allow_users = [\"*\"] opens an exec action to everyone")
    func anyUser() throws {
        let c = try config("[actions.x]\nargv = [\"/bin/true\"]\nallow_users = [\"*\"]\n")
        #expect(c.permits(action: "x", uid: 12345, gid: 12345, daemonUID: Self.daemon))
    }

    @Test("allow_users admits exactly the listed uids")
    func listedUsers() throws {
        let c = try config("[actions.x]\nargv = [\"/bin/true\"]\nallow_users = [1000]\n")
        #expect(c.permits(action: "x", uid: 1000, gid: 5, daemonUID: Self.daemon))
        #expect(!c.permits(action: "x", uid: 1001, gid: 5, daemonUID: Self.daemon))
    }

    @Test("allow_groups admits the primary or a supplementary gid")
    func listedGroups() throws {
        let c = try config("[actions.x]\nargv = [\"/bin/true\"]\nallow_groups = [50]\n")
        #expect(c.permits(action: "x", uid: 1001, gid: 50, daemonUID: Self.daemon))
        #expect(c.permits(action: "x", uid: 1001, gid: 7, supplementaryGroups: [3, 50], daemonUID: Self.daemon))
        #expect(!c.permits(action: "x", uid: 1001, gid: 7, supplementaryGroups: [3], daemonUID: Self.daemon))
    }

    @Test("an allow list on a built-in replaces its open default")
    func closedBuiltin() throws {
        let c = try config("[actions.echo]\nallow_users = []\n")
        #expect(!c.permits(action: "echo", uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
        #expect(c.permits(action: "echo", uid: 0, gid: 0, daemonUID: Self.daemon))
        #expect(c.permits(action: "echo", uid: Self.daemon, gid: 1, daemonUID: Self.daemon))
        #expect(c.permits(action: "noop", uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
    }

    @Test("a table with only exec keys keeps the default policy")
    func execWithoutAllowKeys() throws {
        let c = try config("[actions.x]\nargv = [\"/bin/true\"]\ntimeout_ms = 10\n")
        #expect(c.actions["x"]?.hasExplicitPolicy == false)
        #expect(!c.permits(action: "x", uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
    }
}

@Suite("Who may administer")
struct AdminPolicyTests {
    static let daemon: UInt32 = 999
    static let alice: UInt32 = 1000

    @Test("by default only root and loopd's own uid may administer")
    func defaultAdmins() throws {
        let c = try parse(minimal)
        #expect(c.server.adminUsers.isEmpty && c.server.adminGroups.isEmpty)
        #expect(c.mayAdminister(uid: 0, gid: 0, daemonUID: Self.daemon))
        #expect(c.mayAdminister(uid: Self.daemon, gid: 5, daemonUID: Self.daemon))
        #expect(!c.mayAdminister(uid: Self.alice, gid: Self.alice, supplementaryGroups: [0, 27], daemonUID: Self.daemon))
    }

    @Test("admin_users admits the listed uids, by number or by name")
    func byUID() throws {
        let c = try parse(minimal + "[server]\nadmin_users = [1000, \"root\"]\n")
        #expect(c.server.adminUsers == [1000, 0])
        #expect(c.mayAdminister(uid: Self.alice, gid: 77, daemonUID: Self.daemon))
        #expect(!c.mayAdminister(uid: 1001, gid: 77, daemonUID: Self.daemon))
    }

    @Test("admin_groups admits a member by primary or supplementary gid")
    func byGroup() throws {
        let c = try parse(minimal + "[server]\nadmin_groups = [50, \"root\"]\n")
        #expect(c.server.adminGroups == [50, 0])
        #expect(c.mayAdminister(uid: 1001, gid: 50, daemonUID: Self.daemon))
        #expect(c.mayAdminister(uid: 1001, gid: 7, supplementaryGroups: [3, 50], daemonUID: Self.daemon))
        #expect(!c.mayAdminister(uid: 1001, gid: 7, supplementaryGroups: [3], daemonUID: Self.daemon))
        #expect(!c.mayAdminister(uid: 1001, gid: nil, daemonUID: Self.daemon))
    }

    @Test("root and loopd's own uid stay administrators whatever the lists say")
    func rootAlways() throws {
        let c = try parse(minimal + "[server]\nadmin_users = [1000]\nadmin_groups = [50]\n")
        #expect(c.mayAdminister(uid: 0, gid: 0, daemonUID: Self.daemon))
        #expect(c.mayAdminister(uid: Self.daemon, gid: Self.daemon, daemonUID: Self.daemon))
        #expect(!c.mayAdminister(uid: 1002, gid: 1002, daemonUID: Self.daemon))
    }

    @Test("names that do not exist, \"*\" and bad ids are config errors naming the key")
    func invalid() {
        for (lines, key, phrase) in [
            ("admin_users = [\"no-such-user-loopd\"]", "server.admin_users[0]", #"no user named "no-such-user-loopd""#),
            ("admin_groups = [0, \"no-such-group-loopd\"]", "server.admin_groups[1]", #"no group named "no-such-group-loopd""#),
            ("admin_users = [\"*\"]", "server.admin_users[0]", "is not accepted here"),
            ("admin_groups = [-1]", "server.admin_groups[0]", "numeric id between 0 and"),
            ("admin_users = \"root\"", "server.admin_users", "must be an array"),
        ] {
            do {
                _ = try parse(minimal + "[server]\n" + lines + "\n")
                Issue.record("accepted \(lines)")
            } catch {
                #expect(error.key == key, "\(lines)")
                #expect(error.description.contains(phrase), "\(error)")
            }
        }
    }
}

/// Found by FuzzConfigParser (docs/RELIABILITY.md): a raw NUL byte made the
/// C parser stop reading and the rest of the file was silently dropped.
@Suite struct ConfigRawNULRegressionTests {
    @Test func bugRawNULIsRefusedNotTruncated() {
        let text = "[[workers]]\nname = \"w1\"\n\0[limits]\nmax_line_bytes = \"oops\"\n"
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, origin: "t.toml") }
        do {
            _ = try ConfigLoader.parse(text, origin: "t.toml")
        } catch {
            #expect(error.description.contains("NUL"))
            #expect(error.description.hasPrefix("t.toml"))
        }
    }
}

// MARK: - Schedules

@Suite("Config: [schedules.NAME]")
struct ScheduleConfigTests {
    @Test("a schedule's keys become its grid, its policies and the submit it makes; the defaults are one and skip")
    func schedulesParse() throws {
        let config = try parse(minimal + """
            [actions.report]
            argv = ["/usr/bin/printf", "%s"]
            max_client_args = 1
            [schedules.report]
            action = "report"
            args = ["weekly"]
            cron = "0 9 * * mon-fri"
            zone = "UTC"
            worker = "w1"
            priority = 5
            timeout_ms = 60000
            retries = 2
            durable = true
            catch_up = "all"
            catch_up_limit = 7
            overlap = "cancel_previous"
            jitter = "2m"
            [schedules.tick]
            action = "noop"
            every = "1h30m"
            """)
        let report = try #require(config.schedules["report"])
        #expect(report.when == .cron(try CronExpression(parsing: "0 9 * * mon-fri"), zone: .utc))
        #expect(report.job.action == "report" && report.job.args == ["weekly"] && report.job.placement == .worker("w1"))
        #expect(report.job.priority == 5 && report.job.timeoutMs == 60_000 && report.job.retries == 2 && report.job.durable)
        #expect(!report.job.wait, "a schedule's job is never waited for")
        #expect(report.catchUp == .all && report.catchUpLimit == 7 && report.overlap == .cancelPrevious)
        #expect(report.jitterMs == 120_000)
        let tick = try #require(config.schedules["tick"])
        #expect(tick.when == .every(milliseconds: 5_400_000))
        #expect(tick.catchUp == .one && tick.overlap == .skip && tick.jitterMs == 0 && tick.job.placement == .any)
        if case .cron(_, let zone) = try parse(minimal + "[schedules.c]\naction = \"noop\"\ncron = \"@daily\"\n")
            .schedules["c"]!.when {
            #expect(zone == .local, "cron reads the host's zone by default")
        }
    }
}
