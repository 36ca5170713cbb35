import Foundation
import Testing
import LoopdProtocol
@testable import LoopctlCommands

// The exit codes a script can rely on (docs/PROTOCOL.md, "loopctl"), one
// test per row. `ExitStatus` is spelled with its module: Testing has one too.

@Suite("loopctl exit codes")
struct LoopctlExitCodeTests {
    static func submitStatus(_ reply: String) throws -> LoopctlCommands.ExitStatus {
        try human(try parse(["submit", "x"]) as SubmitCommand, reply).status
    }

    static func failedReply(_ code: String, state: String = "failed", result: String = "{}") -> String {
        #"{"id":1,"ok":false,"error":{"code":"\#(code)","message":"m"},"job":"j1","state":"\#(state)","worker":"w1","result":\#(result)}"#
    }

    static func execResult(exit: String, signal: String) -> String {
        #"{"exit_code":\#(exit),"signal":\#(signal),"stdout":"","stderr":"","stdout_truncated":false,"stderr_truncated":false}"#
    }

    @Test("0: the job completed")
    func completed() throws {
        #expect(try Self.submitStatus(#"{"id":1,"ok":true,"job":"j1","state":"completed","worker":"w1","result":{}}"#).code == 0)
        #expect(try Self.submitStatus(#"{"id":1,"ok":true,"job":"j1","state":"held","worker":"w1"}"#) == .ok)
    }

    @Test("1: job_failed without an exit status of its own (a built-in's failure, a child that could not start)")
    func jobFailed() throws {
        #expect(try Self.submitStatus(Self.failedReply("job_failed")) == .jobFailed)
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "null", signal: "null"))).code == 1)
        // Nonsense from the daemon is not passed on as an exit status.
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "0", signal: "null"))) == .jobFailed)
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "256", signal: "null"))) == .jobFailed)
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "null", signal: "0"))) == .jobFailed)
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "null", signal: "200"))) == .jobFailed)
    }

    @Test("N: an exec child's own non-zero exit status (3 gives 3, 255 gives 255)")
    func childExitStatus() throws {
        for n in [1, 2, 3, 42, 124, 255] {
            let status = try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "\(n)", signal: "null")))
            #expect(status == .childExited(status: Int32(n)))
            #expect(status.code == Int32(n))
        }
    }

    @Test("128+N: an exec child killed by signal N (9 gives 137, 15 gives 143)")
    func childSignal() throws {
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "null", signal: "9"))).code == 137)
        #expect(try Self.submitStatus(Self.failedReply("job_failed", result: Self.execResult(exit: "null", signal: "15"))) == .childKilled(signal: 15))
    }

    @Test("124: the job timed out, whatever its child's signal")
    func timedOut() throws {
        let status = try Self.submitStatus(Self.failedReply("timeout", state: "timed_out", result: Self.execResult(exit: "null", signal: "15")))
        #expect(status == .jobTimedOut && status.code == 124)
    }

    @Test("125: the job was cancelled, whatever its child's signal")
    func cancelled() throws {
        let status = try Self.submitStatus(Self.failedReply("cancelled", state: "cancelled", result: Self.execResult(exit: "null", signal: "15")))
        #expect(status == .jobCancelled && status.code == 125)
    }

    @Test("5: every refusal code, with or without job fields; a cancel that did not cancel")
    func refused() throws {
        for code in ["bad_request", "unknown_op", "unknown_action", "unknown_worker", "unknown_job", "forbidden", "queue_full",
                     "journal_unavailable", "shutting_down", "busy", "internal", "too_large", "a_code_from_the_future"] {
            #expect(try Self.submitStatus(#"{"id":1,"ok":false,"error":{"code":"\#(code)","message":"m"}}"#).code == 5, "\(code)")
        }
        // A durable job whose journal write failed, reported to its waiter.
        #expect(try Self.submitStatus(Self.failedReply("journal_unavailable")) == .refused)
        let cancel = try human(try parse(["cancel", "j1"]) as CancelCommand, #"{"id":1,"ok":true,"job":"j1","cancelled":false,"state":"failed"}"#)
        #expect(cancel.status == .refused && cancel.status.code == 5)
    }

    @Test("2, 3, 4: usage error, cannot connect, no reply (unchanged)")
    func clientSide() throws {
        #expect(Loopctl.execute(["wait", "--timeout", "0", "j1"], in: Captured().context()).code == 2)
        #expect(Loopctl.execute(["wait", "--socket", temporarySocketPath(), "j1"], in: Captured().context()).code == 3)
        let closing = try FakeServer { _, _ in .close }
        defer { closing.stop() }
        #expect(Loopctl.execute(["wait", "--socket", closing.path, "j1"], in: Captured().context()).code == 4)
    }

    @Test("6: wait --timeout passed first")
    func waitTimeout() throws {
        let out = try human(try parse(["wait", "--timeout", "10", "j1"]) as WaitCommand, #"{"id":1,"ok":true,"job":"j1","state":"running","worker":"w1"}"#)
        #expect(out.status.code == 6)
    }

    @Test("the loopctl process exits with the child's status, 137 for SIGKILL, 124 for a timeout")
    func processExitCodes() throws {
        let binary = try #require(LoopctlBinary.url(), "loopctl binary not found next to the test bundle")
        for (result, expected) in [
            (Self.failedReply("job_failed", result: Self.execResult(exit: "3", signal: "null")), Int32(3)),
            (Self.failedReply("job_failed", result: Self.execResult(exit: "null", signal: "9")), 137),
            (Self.failedReply("timeout", state: "timed_out"), 124),
            (Self.failedReply("cancelled", state: "cancelled"), 125),
            (#"{"id":1,"ok":false,"error":{"code":"forbidden","message":"m"}}"#, 5),
        ] {
            // loopctl's one request is request 1, which these replies answer.
            let server = try FakeServer { _, _ in .lines([result]) }
            defer { server.stop() }
            #expect(try LoopctlBinary.run(binary, ["submit", "--socket", server.path, "x"]) == expected, "\(result)")
        }
    }

    @Test("7: mode refused with forbidden (not an administrator); 5 for mode's other refusals")
    func notAdministrator() throws {
        let command = try parse(["mode", "w1", "maintenance"]) as ModeCommand
        let forbidden = try human(command, #"{"id":1,"ok":false,"error":{"code":"forbidden","message":"uid 65534 may not switch worker modes"}}"#)
        #expect(forbidden.status == .notAdministrator && forbidden.status.code == 7)
        #expect(forbidden.diagnostic?.contains("only an administrator of loopd may switch a worker's mode") == true)
        #expect(forbidden.diagnostic?.contains("server.admin_users") == true)
        #expect(forbidden.diagnostic?.contains("uid 65534 may not switch worker modes") == true)
        let unknown = try human(command, #"{"id":1,"ok":false,"error":{"code":"unknown_worker","message":"m"}}"#)
        #expect(unknown.status == .refused)
        let binary = try #require(LoopctlBinary.url(), "loopctl binary not found next to the test bundle")
        let server = try FakeServer { _, _ in .lines([#"{"id":1,"ok":false,"error":{"code":"forbidden","message":"m"}}"#]) }
        defer { server.stop() }
        #expect(try LoopctlBinary.run(binary, ["mode", "--socket", server.path, "w1", "maintenance"]) == 7)
    }

    @Test("--help, submit --help and wait --help list every exit code")
    func helpListsExitCodes() {
        for arguments in [["--help"], ["submit", "--help"], ["wait", "--help"], ["help", "wait"]] {
            let captured = Captured()
            #expect(Loopctl.execute(arguments, in: captured.context()) == .ok)
            for row in [
                "  0      success", "  1      the job failed (job_failed)", "  N      submit/wait of an exec job",
                "  2      usage error", "  3      cannot connect", "  4      no reply", "  5      the daemon refused",
                "  6      wait --timeout passed", "  7      mode was refused", "  8      the job expired",
                "  9      the daemon's socket was made to listen by another uid", "  124    the job timed out", "  125    the job was cancelled",
                "  128+N  an exec job's child was killed by signal N", "--json prints the reply, which tells exactly",
            ] {
                #expect(captured.out.contains(row), "\(arguments) lacks \(row)")
            }
        }
    }

    @Test("exit status codes and descriptions")
    func codes() {
        let fixed: [(LoopctlCommands.ExitStatus, Int32)] = [
            (.ok, 0), (.jobFailed, 1), (.usage, 2), (.cannotConnect, 3), (.protocolError, 4), (.refused, 5),
            (.waitTimedOut, 6), (.notAdministrator, 7), (.jobTimedOut, 124), (.jobCancelled, 125),
        ]
        for (status, code) in fixed { #expect(status.code == code) }
        #expect(LoopctlCommands.ExitStatus.child(exitStatus: 7) == .childExited(status: 7))
        #expect(LoopctlCommands.ExitStatus.child(exitStatus: -1) == .jobFailed)
        #expect(LoopctlCommands.ExitStatus.child(signal: 127).code == 255)
        #expect(LoopctlCommands.ExitStatus.child(signal: 128) == .jobFailed)
        #expect(LoopctlCommands.ExitStatus.childExited(status: 3).description == "3 (the job's exit status 3)")
        #expect(LoopctlCommands.ExitStatus.childKilled(signal: 9).description == "137 (the job was killed by signal 9)")
        #expect(LoopctlCommands.ExitStatus.refused.description == "5")
    }
}
