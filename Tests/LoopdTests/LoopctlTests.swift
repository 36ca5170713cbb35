import Foundation
import Testing
import LoopdClient
@testable import LoopctlCommands

#if canImport(Glibc)
import Glibc
#endif

// loopctl against canned replies and a fake server. The real daemon's
// round trips live in the daemon's own tests.

// MARK: - Argument parsing

@Suite("loopctl arguments")
struct LoopctlArgumentTests {
    @Test("submit echo -n hi passes -n to the job, not to loopctl")
    func passthroughDashArguments() throws {
        let submit: SubmitCommand = try parse(["submit", "echo", "-n", "hi"])
        #expect(submit.action == "echo")
        #expect(submit.args == ["-n", "hi"])
    }

    @Test("options before the action are loopctl's; everything after is the job's")
    func optionsThenPassthrough() throws {
        let submit: SubmitCommand = try parse([
            "submit", "--socket", "/tmp/s", "--json", "--worker", "w2", "--no-wait", "--delay", "50",
            "--timeout", "1000", "--mode", "maintenance", "--durable", "ls", "-la", "--json", "--worker", "x",
        ])
        #expect(submit.connection.socket == "/tmp/s")
        #expect(submit.connection.json)
        #expect(submit.worker == "w2")
        #expect(submit.noWait)
        #expect(submit.delay == 50)
        #expect(submit.timeout == 1000)
        #expect(submit.mode == "maintenance")
        #expect(submit.durable)
        #expect(submit.action == "ls")
        #expect(submit.args == ["-la", "--json", "--worker", "x"])
    }

    @Test("a -- before the action is skipped, so an action may start with a dash")
    func terminatorBeforeAction() throws {
        let submit: SubmitCommand = try parse(["submit", "--key", "k", "--", "echo", "--", "x"])
        #expect(submit.key == "k")
        #expect(submit.action == "echo")
        #expect(submit.args == ["--", "x"])
    }

    @Test("--worker and --key together are a usage error (exit 2)")
    func workerKeyExclusive() throws {
        #expect(throws: (any Error).self) { try Loopctl.parseAsRoot(["submit", "--worker", "w1", "--key", "k", "echo"]) }
        let captured = Captured()
        let status = Loopctl.execute(["submit", "--worker", "w1", "--key", "k", "echo", "hi"], in: captured.context())
        #expect(status == .usage)
        #expect(captured.err.contains("Give --worker or --key, not both."))
        #expect(captured.out.isEmpty)
    }

    @Test("usage errors exit 2: unknown option, missing action, out-of-range delay, missing job id")
    func usageErrors() {
        for arguments in [
            ["submit", "--bogus", "echo"], ["submit"], ["submit", "--delay", "-1", "echo"],
            ["submit", "--timeout", "0", "echo"], ["status"], ["mode", "w1"], ["frobnicate"],
        ] {
            let captured = Captured()
            #expect(Loopctl.execute(arguments, in: captured.context()) == .usage, "\(arguments)")
            #expect(captured.err.hasPrefix("Error:"), "\(arguments): \(captured.err)")
        }
    }

    @Test("help exits 0 on stdout and documents the exit codes")
    func helpDocumentsExitCodes() {
        for arguments in [["--help"], ["submit", "--help"], ["help", "workers"]] {
            let captured = Captured()
            #expect(Loopctl.execute(arguments, in: captured.context()) == .ok)
            #expect(captured.out.contains("USAGE:"))
            #expect(captured.err.isEmpty)
        }
        let captured = Captured()
        _ = Loopctl.execute(["--help"], in: captured.context())
        for code in ["0      success", "1      the job failed", "2      usage error", "3      cannot connect", "4      no reply"] {
            #expect(captured.out.contains(code), "help lacks \(code)")
        }
    }

    @Test("every subcommand takes --socket and --json")
    func globalOptionsEverywhere() throws {
        for arguments in [
            ["submit", "noop"], ["status", "j1"], ["cancel", "j1"], ["workers"], ["inspect", "w1"],
            ["mode", "w1", "m"], ["stats"], ["metrics"], ["ping"], ["jobs"], ["wait", "j1"],
            ["schedules", "list"], ["schedules", "pause", "s"], ["schedules", "resume", "s"], ["schedules", "trigger", "s"],
            ["retry", "j1"], ["discard", "j1"],
        ] {
            // A group's subcommand takes the options after its own name.
            let head = arguments[0] == "schedules" ? Array(arguments.prefix(2)) : [arguments[0]]
            let command = try Loopctl.parseAsRoot(head + ["--socket", "/x.sock", "--json"] + arguments.dropFirst(head.count))
            let client = try #require(command as? any ClientCommand)
            #expect(client.connection.socket == "/x.sock")
            #expect(client.connection.json)
        }
    }
}

// MARK: - Requests

@Suite("loopctl requests")
struct LoopctlRequestTests {
    @Test("submit sends only what was asked, args always")
    func submitRequest() throws {
        #expect(requestLine(try parse(["submit", "echo", "-n", "hi"]) as SubmitCommand)
            == #"{"id":1,"op":"submit","action":"echo","args":["-n","hi"]}"#)
        #expect(requestLine(try parse(["submit", "noop"]) as SubmitCommand)
            == #"{"id":1,"op":"submit","action":"noop","args":[]}"#)
        let full: SubmitCommand = try parse([
            "submit", "--worker", "any", "--no-wait", "--delay", "0", "--timeout", "86400000", "--mode", "m", "--durable",
            "sleep", "100",
        ])
        #expect(requestLine(full) == #"{"id":1,"op":"submit","action":"sleep","args":["100"],"worker":"any","wait":false,"delay_ms":0,"timeout_ms":86400000,"mode":"m","durable":true}"#)
        let keyed: SubmitCommand = try parse(["submit", "--key", "user-7", "echo", "quote\"d"])
        #expect(requestLine(keyed) == #"{"id":1,"op":"submit","action":"echo","args":["quote\"d"],"key":"user-7"}"#)
    }

    @Test("the daemon's own decoder accepts every request loopctl builds")
    func requestsDecode() throws {
        let lines = try [
            requestLine(parse(["submit", "--key", "k", "--no-wait", "--delay", "5", "--timeout", "9", "--mode", "m", "--durable", "echo", "-n"]) as SubmitCommand),
            requestLine(parse(["status", "j-1"]) as StatusCommand),
            requestLine(parse(["cancel", "j-1"]) as CancelCommand),
            requestLine(parse(["workers"]) as WorkersCommand),
            requestLine(parse(["inspect", "w1"]) as InspectCommand),
            requestLine(parse(["mode", "w1", "maintenance"]) as ModeCommand),
            requestLine(parse(["stats"]) as StatsCommand),
            requestLine(parse(["metrics"]) as MetricsCommand),
            requestLine(parse(["ping"]) as PingCommand),
            requestLine(parse(["wait", "j-1"]) as WaitCommand),
            requestLine(parse(["wait", "--timeout", "250", "j-1"]) as WaitCommand),
            requestLine(parse(["jobs"]) as JobsCommand),
            requestLine(parse(["retry", "j-1"]) as RetryCommand),
            requestLine(parse(["discard", "--state", "failed", "--state", "expired", "--action", "backup", "--limit", "5"]) as DiscardCommand),
            requestLine(parse(["schedules"]) as SchedulesListCommand),
            requestLine(parse(["schedules", "pause", "nightly"]) as ScheduleCommandPause),
            requestLine(parse(["schedules", "resume", "nightly"]) as ScheduleCommandResume),
            requestLine(parse(["schedules", "trigger", "nightly"]) as ScheduleCommandTrigger),
            requestLine(parse([
                "jobs", "--state", "held", "--state", "timed_out", "--worker", "w1", "--action", "sleep",
                "--since", "2026-11-24T08:01:02.345+01:00", "--limit", "5", "--cursor", "c-9",
            ]) as JobsCommand),
        ]
        let expected: [LoopdProtocol.Operation] = [
            .submit(SubmitRequest(action: "echo", args: ["-n"], placement: .key("k"), wait: false, delayMs: 5, timeoutMs: 9, mode: "m", durable: true)),
            .status(job: "j-1"), .cancel(job: "j-1"), .workers, .inspect(worker: "w1"),
            .mode(worker: "w1", mode: "maintenance"), .stats, .metrics, .ping,
            .wait(job: "j-1", timeoutMs: nil), .wait(job: "j-1", timeoutMs: 250), .jobs(JobsQuery()),
            .retry(.job("j-1")),
            .discard(.matching(JobsQuery(states: [.failed, .expired], action: "backup", limit: 5))),
            .schedules, .schedule(.pause, name: "nightly"), .schedule(.resume, name: "nightly"),
            .schedule(.trigger, name: "nightly"),
            .jobs(JobsQuery(states: [.held, .timedOut], worker: "w1", action: "sleep",
                            submittedSinceUnixMs: 1_795_503_662_345, limit: 5, cursor: "c-9")),
        ]
        #expect(lines.count == expected.count)
        for (line, operation) in zip(lines, expected) {
            #expect(try RequestDecoder.decode(Array(line.utf8)).get() == Request(id: .integer(1), operation: operation), "\(line)")
        }
    }

    @Test("the socket path: --socket, then LOOPD_SOCKET, then /run/loopd.sock; ./loopd.sock only when named")
    func socketResolutionOrder() throws {
        let env = ["LOOPD_SOCKET": "/env.sock"]
        #expect(SocketPath.resolve(flag: "/flag.sock", environment: { env[$0] }) == "/flag.sock")
        #expect(SocketPath.resolve(flag: nil, environment: { env[$0] }) == "/env.sock")
        #expect(SocketPath.resolve(flag: "", environment: { env[$0] }) == "/env.sock")
        #expect(SocketPath.resolve(flag: nil, environment: { _ in "" }) == "/run/loopd.sock")
        #expect(SocketPath.resolve(flag: nil, environment: { _ in nil }) == "/run/loopd.sock")
        #expect(SocketPath.resolve(flag: "./loopd.sock", environment: { env[$0] }) == "./loopd.sock")
        #expect(SocketPath.environmentVariable == "LOOPD_SOCKET" && SocketPath.installed == "/run/loopd.sock")

        let status: StatusCommand = try parse(["status", "--socket", "/flag.sock", "j"])
        #expect(status.connection.socketPath(in: Captured().context(environment: env)) == "/flag.sock")
        let plain: StatusCommand = try parse(["status", "j"])
        #expect(plain.connection.socketPath(in: Captured().context(environment: env)) == "/env.sock")
        #expect(plain.connection.socketPath(in: Captured().context()) == "/run/loopd.sock")
    }
}

// MARK: - Human output

@Suite("loopctl human output")
struct LoopctlFormattingTests {
    @Test("submit prints echo's output; noop nothing; sleep its fields")
    func submitResults() throws {
        let submit: SubmitCommand = try parse(["submit", "echo", "a", "b"])
        let echo = try human(submit, #"{"id":1,"ok":true,"job":"j1","state":"completed","worker":"w1","result":{"output":"a b"}}"#)
        #expect(echo == CommandOutput(standardOutput: "a b\n"))
        let noop = try human(submit, #"{"id":1,"ok":true,"job":"j2","state":"completed","worker":"w1","result":{}}"#)
        #expect(noop == CommandOutput())
        let sleep = try human(submit, #"{"id":1,"ok":true,"job":"j3","state":"completed","worker":"w1","result":{"slept_ms":100}}"#)
        #expect(sleep == CommandOutput(standardOutput: "slept_ms  100\n"))
    }

    @Test("submit of an exec action: stdout and stderr verbatim, truncation noted")
    func submitExec() throws {
        let submit: SubmitCommand = try parse(["submit", "ls"])
        let out = try human(submit, #"{"id":1,"ok":true,"job":"j1","state":"completed","worker":"w1","result":{"exit_code":0,"signal":null,"stdout":"a\nb\n","stderr":"warn\n","stdout_truncated":true,"stderr_truncated":false}}"#)
        #expect(out.standardOutput == "a\nb\n")
        #expect(out.standardError == "warn\nloopctl: the job's stdout was cut at the daemon's output cap\n")
        #expect(out.status == .ok)
    }

    @Test("a timed-out job prints its output, then its error code, and exits 124")
    func submitFailed() throws {
        let submit: SubmitCommand = try parse(["submit", "ls"])
        let out = try human(submit, #"{"id":1,"ok":false,"job":"j9","state":"timed_out","worker":"w1","error":{"code":"timeout","message":"ran past 100 ms"},"result":{"exit_code":null,"signal":15,"stdout":"partial","stderr":"","stdout_truncated":false,"stderr_truncated":false}}"#)
        #expect(out.standardOutput == "partial")
        #expect(out.diagnostic == "loopctl: job j9 timed_out: timeout: ran past 100 ms")
        #expect(out.status == .jobTimedOut)
    }

    @Test("submit --no-wait prints the job id alone; a refusal prints its code and exits 5")
    func submitNoWaitAndRefusal() throws {
        let submit: SubmitCommand = try parse(["submit", "--no-wait", "noop"])
        #expect(try human(submit, #"{"id":1,"ok":true,"job":"j-42","state":"queued","worker":"w1"}"#) == CommandOutput(standardOutput: "j-42\n"))
        let refused = try human(submit, #"{"id":1,"ok":false,"error":{"code":"unknown_worker","message":"no worker \"w9\""}}"#)
        #expect(refused == CommandOutput(diagnostic: #"loopctl: unknown_worker: no worker "w9""#, status: .refused))
    }

    @Test("workers: a neat table, running job or -, its action and start, stalled with its duration")
    func workersTable() throws {
        let workers: WorkersCommand = try parse(["workers"])
        let out = try human(workers, #"{"id":1,"ok":true,"workers":[{"name":"w1","mode":"default","queued":0,"held":0,"running":null,"busy":false,"loop":"waiting","stalled_ms":0,"completed":12},{"name":"worker-2","mode":"maintenance","queued":130,"held":4,"running":"j-17","busy":true,"running_action":"echo","running_since":"2026-11-24T07:01:02.348Z","loop":"stalled","stalled_ms":1500,"completed":3}]}"#)
        #expect(out.standardOutput == """
            NAME      MODE         QUEUED  HELD  RUNNING  ACTION  SINCE                     LOOP            COMPLETED
            w1        default           0     0  -        -       -                         waiting                12
            worker-2  maintenance     130     4  j-17     echo    2026-11-24T07:01:02.348Z  stalled 1500ms          3

            """)
    }

    @Test("stats: aligned keys, latency on one line")
    func statsPairs() throws {
        let stats: StatsCommand = try parse(["stats"])
        let out = try human(stats, #"{"id":1,"ok":true,"accepted":10,"completed":8,"failed":1,"cancelled":1,"queued":0,"running":0,"connections":2,"latency_us":{"count":9,"p50":120,"p99":300,"max":410}}"#)
        #expect(out.standardOutput == """
            accepted     10
            completed    8
            failed       1
            cancelled    1
            queued       0
            running      0
            connections  2
            latency      p50 120 us, p99 300 us, max 410 us (9 jobs)

            """)
    }

    @Test("status, inspect, mode, ping, cancel")
    func otherOps() throws {
        let status = try human(try parse(["status", "j1"]) as StatusCommand,
            #"{"id":1,"ok":true,"job":"j1","state":"failed","worker":"w1","action":"fail","durable":false,"error":{"code":"job_failed","message":"fail always fails"},"result":{}}"#)
        #expect(status.standardOutput == """
            job      j1
            state    failed
            worker   w1
            action   fail
            durable  no
            error    job_failed: fail always fails
            result   {}

            """)
        #expect(status.status == .ok)

        let dump = "<Loop w1> current mode = default\n  sources = 1\n"
        let inspect = try human(try parse(["inspect", "w1"]) as InspectCommand,
            JSON.object([("id", 1), ("ok", true), ("worker", "w1"), ("description", .string(dump))]).serialized())
        #expect(inspect.standardOutput == dump)

        let mode = try human(try parse(["mode", "w1", "maintenance"]) as ModeCommand,
            #"{"id":1,"ok":true,"worker":"w1","mode":"maintenance","previous":"default"}"#)
        #expect(mode.standardOutput == "w1: default -> maintenance\n")

        let ping = try human(try parse(["ping"]) as PingCommand, #"{"id":1,"ok":true,"pid":123,"version":"0.1.0"}"#)
        #expect(ping.standardOutput == "loopd 0.1.0 is up (pid 123)\n")

        let cancel: CancelCommand = try parse(["cancel", "j5"])
        #expect(try human(cancel, #"{"id":1,"ok":true,"job":"j5","cancelled":true,"state":"cancelled"}"#) == CommandOutput(standardOutput: "cancelled j5\n"))
        #expect(try human(cancel, #"{"id":1,"ok":true,"job":"j5","cancelled":true,"state":"cancelled","started":true}"#)
            == CommandOutput(standardOutput: "cancelled j5 (it was running: stopped)\n"))
        let late = try human(cancel, #"{"id":1,"ok":true,"job":"j5","cancelled":false,"state":"completed"}"#)
        #expect(late == CommandOutput(diagnostic: "loopctl: job j5 was not cancelled: it is completed", status: .refused))
        let unknown = try human(cancel, #"{"id":1,"ok":false,"error":{"code":"unknown_job","message":"no job j5"}}"#)
        #expect(unknown.status == .refused && unknown.diagnostic == "loopctl: unknown_job: no job j5")
    }

    @Test("an ok reply without its op's required field is a protocol error")
    func missingFields() throws {
        #expect(throws: ClientError.self) { try human(try parse(["workers"]) as WorkersCommand, #"{"id":1,"ok":true}"#) }
        #expect(throws: ClientError.self) { try human(try parse(["inspect", "w1"]) as InspectCommand, #"{"id":1,"ok":true}"#) }
        #expect(throws: LoopdError.self) { try RawReply(line: #"{"id":1}"#) }
        #expect(throws: LoopdError.self) { try RawReply(line: "not json") }
        #expect(throws: LoopdError.self) { try RawReply(line: "[1]") }
    }
}

// MARK: - End to end against a fake daemon

@Suite("loopctl end to end (fake daemon)")
struct LoopctlEndToEndTests {
    @Test("submit over the socket: the request line arrives, the result is printed, exit 0")
    func submitRoundTrip() throws {
        let seen = SeenLines()
        let server = try FakeServer { request, _ in
            seen.append(request)
            return .lines([FakeServer.reply(to: request, #""ok":true,"job":"j1","state":"completed","worker":"w1","result":{"output":"-n hi"}"#)])
        }
        defer { server.stop() }

        let captured = Captured()
        let status = Loopctl.execute(["submit", "--socket", server.path, "--worker", "w1", "echo", "-n", "hi"], in: captured.context())
        #expect(status == .ok)
        #expect(captured.out == "-n hi\n")
        #expect(captured.err.isEmpty)
        #expect(seen.all == [#"{"id":1,"op":"submit","action":"echo","args":["-n","hi"],"worker":"w1"}"#])
    }

    @Test("--json prints the raw reply line; LOOPD_SOCKET is used without --socket; refusal exits 5")
    func jsonAndEnvironment() throws {
        let server = try FakeServer { request, _ in
            if request.contains(#""op":"ping""#) {
                return .lines([FakeServer.reply(to: request, #""ok":true,"pid":7,"version":"0.1.0""#)])
            }
            return .lines([FakeServer.reply(to: request, #""ok":false,"error":{"code":"unknown_worker","message":"no worker w9"}"#)])
        }
        defer { server.stop() }

        let ping = Captured()
        #expect(Loopctl.execute(["ping", "--json"], in: ping.context(environment: ["LOOPD_SOCKET": server.path])) == .ok)
        #expect(ping.out == #"{"id":1,"ok":true,"pid":7,"version":"0.1.0"}"# + "\n")

        let refused = Captured()
        #expect(Loopctl.execute(["inspect", "--json", "--socket", server.path, "w9"], in: refused.context()) == .refused)
        #expect(refused.out == #"{"id":1,"ok":false,"error":{"code":"unknown_worker","message":"no worker w9"}}"# + "\n")
        #expect(refused.err == "loopctl: unknown_worker: no worker w9\n")
    }

    @Test("pipelined requests: replies out of order are matched by id")
    func outOfOrderReplies() throws {
        // Holds the first two requests, then answers all three newest first.
        let server = try FakeServer { request, held in
            if held.count < 2 { return .holdUntilNext }
            let all = held + [request]
            return .lines(all.reversed().map { r in
                let op = (try? JSONParser.parse(r.utf8))?["op"]?.stringValue ?? "?"
                return FakeServer.reply(to: r, #""ok":true,"echo":"\#(op)""#)
            })
        }
        defer { server.stop() }

        let client = try LoopdClient.Blocking.connect(path: server.path, serverUID: nil, replyTimeoutMs: 10_000)
        defer { client.closeWithoutWaiting() }
        let a = client.start([("op", "ping")])
        let b = client.start([("op", "stats")])
        let c = client.start([("op", "workers")])
        #expect([a.id, b.id, c.id] == [1, 2, 3])
        #expect(try client.answer(a).json["echo"] == "ping")
        #expect(try client.answer(b).json["echo"] == "stats")
        #expect(try client.answer(c).json["echo"] == "workers")
    }

    @Test("a reply without an id (too_large) answers the pending request")
    func nullIDReply() throws {
        let server = try FakeServer { _, _ in
            .lines([#"{"id":null,"ok":false,"error":{"code":"too_large","message":"line over 65536 bytes"}}"#])
        }
        defer { server.stop() }
        let captured = Captured()
        #expect(Loopctl.execute(["stats", "--socket", server.path], in: captured.context()) == .refused)
        #expect(captured.err == "loopctl: too_large: line over 65536 bytes\n")
    }

    @Test("a connection refused with busy before the request is read: the code is shown, exit 5")
    func refusedConnection() throws {
        let server = try FakeServer(refusal: #"{"id":null,"ok":false,"error":{"code":"busy","message":"too many connections"}}"#) { _, _ in .close }
        defer { server.stop() }
        // Several rounds: the close may come before or after loopctl writes.
        for _ in 0..<20 {
            let captured = Captured()
            #expect(Loopctl.execute(["submit", "--socket", server.path, "noop"], in: captured.context()) == .refused)
            #expect(captured.err == "loopctl: busy: too many connections\n")
        }
    }

    @Test("the daemon closing without a reply, or replying garbage, exits 4")
    func protocolFailures() throws {
        let closing = try FakeServer { _, _ in .close }
        defer { closing.stop() }
        let closed = Captured()
        #expect(Loopctl.execute(["ping", "--socket", closing.path], in: closed.context()) == .protocolError)
        #expect(closed.err.contains("closed the connection"))

        let garbage = try FakeServer { _, _ in .lines(["this is not json"]) }
        defer { garbage.stop() }
        let bad = Captured()
        #expect(Loopctl.execute(["ping", "--socket", garbage.path], in: bad.context()) == .protocolError)
        #expect(bad.err.contains("protocol error"))
    }

    @Test("a reply that is not an object with a boolean ok exits 4 and shows the line")
    func notAReply() throws {
        for (line, why) in [(#"{"id":1}"#, #"reply has no boolean "ok""#), ("[1]", "reply is not a JSON object")] {
            let server = try FakeServer { _, _ in .lines([line]) }
            defer { server.stop() }
            let captured = Captured()
            #expect(Loopctl.execute(["ping", "--socket", server.path], in: captured.context()) == .protocolError)
            #expect(captured.err == "loopctl: protocol error: \(why): \(line)\n")
            #expect(captured.out.isEmpty)
        }
    }

    @Test("nothing listening exits 3 and says where it looked")
    func cannotConnect() throws {
        let missing = temporarySocketPath()
        let captured = Captured()
        #expect(Loopctl.execute(["workers", "--socket", missing], in: captured.context()) == .cannotConnect)
        #expect(captured.err.contains("cannot connect to loopd at \(missing)"))
        #expect(captured.out.isEmpty)

        // A socket node with no daemon behind it: ECONNREFUSED, still 3.
        let server = try FakeServer { _, _ in .close }
        server.stop()
        let path = server.path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = withUnixAddress(path) { bind(fd, $0, $1) }
        #expect(bound == 0)
        defer { _ = close(fd); _ = unlink(path) }
        #expect(throws: ClientError.cannotConnect(path: path, errno: ECONNREFUSED)) {
            _ = try LoopdClient.Blocking.connect(path: path, serverUID: nil)
        }
        #expect(Loopctl.execute(["ping", "--socket", path], in: Captured().context()) == .cannotConnect)
    }

    @Test("the loopctl executable exits 3 with no daemon and 2 on a usage error")
    func executableExitCodes() throws {
        let binary = try #require(LoopctlBinary.url(), "loopctl binary not found next to the test bundle")
        #expect(try LoopctlBinary.run(binary, ["ping", "--socket", temporarySocketPath()]) == 3)
        #expect(try LoopctlBinary.run(binary, ["submit", "--worker", "a", "--key", "b", "echo"]) == 2)
        #expect(try LoopctlBinary.run(binary, ["--help"]) == 0)
    }
}
