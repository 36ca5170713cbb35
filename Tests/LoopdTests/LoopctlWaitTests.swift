import Foundation
import Testing
import LoopdProtocol
@testable import LoopctlCommands

// loopctl wait against canned replies and the fake daemon
// (LoopctlSupport.swift).

@Suite("loopctl wait")
struct LoopctlWaitTests {
    @Test("the request: job, and timeout_ms only with --timeout")
    func request() throws {
        #expect(requestLine(try parse(["wait", "j1"]) as WaitCommand) == #"{"id":1,"op":"wait","job":"j1"}"#)
        #expect(requestLine(try parse(["wait", "--timeout", "5000", "j1"]) as WaitCommand) == #"{"id":1,"op":"wait","job":"j1","timeout_ms":5000}"#)
        for arguments in [["wait"], ["wait", "--timeout", "0", "j1"], ["wait", "--timeout", "86400001", "j1"], ["wait", "j1", "j2"]] {
            #expect(Loopctl.execute(arguments, in: Captured().context()) == .usage, "\(arguments)")
        }
    }

    @Test("a completed job: its result as submit prints it, exit 0")
    func completed() throws {
        let wait: WaitCommand = try parse(["wait", "j1"])
        #expect(try human(wait, #"{"id":1,"ok":true,"job":"j1","state":"completed","worker":"w1","result":{"output":"a b"}}"#)
            == CommandOutput(standardOutput: "a b\n"))
        let exec = try human(wait, #"{"id":1,"ok":true,"job":"j1","state":"completed","worker":"w2","result":{"exit_code":0,"signal":null,"stdout":"out\n","stderr":"err\n","stdout_truncated":false,"stderr_truncated":false}}"#)
        #expect(exec == CommandOutput(standardOutput: "out\n", standardError: "err\n"))
    }

    @Test("each way a job can end badly: output, one diagnostic line, its exit code")
    func failures() throws {
        let wait: WaitCommand = try parse(["wait", "j1"])
        let failed = try human(wait, #"{"id":1,"ok":false,"error":{"code":"job_failed","message":"boom"},"job":"j1","state":"failed","worker":"w1","result":{}}"#)
        #expect(failed == CommandOutput(diagnostic: "loopctl: job j1 failed: job_failed: boom", status: .jobFailed))

        let exited = try human(wait, #"{"id":1,"ok":false,"error":{"code":"job_failed","message":"exited with status 3"},"job":"j1","state":"failed","worker":"w2","result":{"exit_code":3,"signal":null,"stdout":"","stderr":"no such file\n","stdout_truncated":false,"stderr_truncated":false}}"#)
        #expect(exited == CommandOutput(standardError: "no such file\n", diagnostic: "loopctl: job j1 failed: job_failed: exited with status 3", status: .childExited(status: 3)))

        let killed = try human(wait, #"{"id":1,"ok":false,"error":{"code":"job_failed","message":"killed by signal 9"},"job":"j1","state":"failed","worker":"w2","result":{"exit_code":null,"signal":9,"stdout":"","stderr":"","stdout_truncated":false,"stderr_truncated":false}}"#)
        #expect(killed.status == .childKilled(signal: 9) && killed.status.code == 137)

        let timedOut = try human(wait, #"{"id":1,"ok":false,"error":{"code":"timeout","message":"ran past 100 ms"},"job":"j1","state":"timed_out","worker":"w1","result":{}}"#)
        #expect(timedOut == CommandOutput(diagnostic: "loopctl: job j1 timed_out: timeout: ran past 100 ms", status: .jobTimedOut))

        let cancelled = try human(wait, #"{"id":1,"ok":false,"error":{"code":"cancelled","message":"cancelled by uid 0"},"job":"j1","state":"cancelled","worker":"w1","result":{}}"#)
        #expect(cancelled == CommandOutput(diagnostic: "loopctl: job j1 cancelled: cancelled: cancelled by uid 0", status: .jobCancelled))
    }

    @Test("--timeout passing first: no output, a diagnostic with the state, exit 6")
    func waitTimedOut() throws {
        let wait: WaitCommand = try parse(["wait", "--timeout", "250", "j1"])
        for state in ["running", "queued", "held", "delayed"] {
            let out = try human(wait, #"{"id":1,"ok":true,"job":"j1","state":"\#(state)","worker":"w1"}"#)
            #expect(out == CommandOutput(diagnostic: "loopctl: job j1 is still \(state) after 250 ms", status: .waitTimedOut))
        }
        #expect(throws: ClientError.self) { try human(wait, #"{"id":1,"ok":true,"job":"j1"}"#) }
    }

    @Test("refusals: unknown job, forbidden, bad request exit 5 with the code")
    func refusals() throws {
        let wait: WaitCommand = try parse(["wait", "j1"])
        for code in ["unknown_job", "forbidden", "bad_request"] {
            let out = try human(wait, #"{"id":1,"ok":false,"error":{"code":"\#(code)","message":"no"}}"#)
            #expect(out == CommandOutput(diagnostic: "loopctl: \(code): no", status: .refused))
        }
    }

    @Test("over the socket with --json: the reply line, and the exit code of how the job ended")
    func endToEnd() throws {
        let server = try FakeServer { request, _ in
            .lines([FakeServer.reply(to: request, #""ok":false,"error":{"code":"job_failed","message":"exited with status 3"},"job":"j7","state":"failed","worker":"w2","result":{"exit_code":3,"signal":null,"stdout":"","stderr":"","stdout_truncated":false,"stderr_truncated":false}"#)])
        }
        defer { server.stop() }
        let captured = Captured()
        let status = Loopctl.execute(["wait", "--json", "--socket", server.path, "j7"], in: captured.context())
        #expect(status == .childExited(status: 3))
        #expect(status.code == 3)
        #expect(captured.out.hasPrefix(#"{"id":1,"ok":false,"error":{"code":"job_failed""#))
        #expect(captured.err == "loopctl: job j7 failed: job_failed: exited with status 3\n")
    }
}
