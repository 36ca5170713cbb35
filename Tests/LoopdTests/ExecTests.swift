import Foundation
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Issue 3 item 4: exec actions — fixed argv, client arguments, output cap,
/// timeout with SIGTERM then SIGKILL, exit through a pidfd.
@Suite(.serialized) struct ExecTests {
    private func exec(_ argv: [String], _ tweak: (inout DaemonConfig.Exec) -> Void = { _ in }) -> DaemonConfig.Action {
        var spec = DaemonConfig.Exec(argv: argv)
        spec.env = ["PATH": "/usr/bin:/bin"]
        tweak(&spec)
        var a = DaemonConfig.Action()
        a.allowAnyUser = true
        a.exec = spec
        return a
    }

    private func daemon() -> RunningDaemon {
        RunningDaemon { config in
            config.actions["hello"] = exec(["/bin/echo", "hello"])
            config.actions["say"] = exec(["/usr/bin/printf", "%s|"]) { $0.maxClientArgs = 4 }
            config.actions["flood"] = exec(["/usr/bin/yes", "0123456789"]) { $0.outputCapBytes = 1000; $0.timeoutMs = 300 }
            config.actions["stubborn"] = exec(["/bin/sh", "-c", "trap '' TERM; echo started; while :; do sleep 0.05; done"]) {
                $0.timeoutMs = 200; $0.killGraceMs = 200
            }
            config.actions["polite"] = exec(["/bin/sleep", "30"]) { $0.timeoutMs = 100 }
            config.actions["exit3"] = exec(["/bin/sh", "-c", "echo oops >&2; exit 3"])
            config.actions["env"] = exec(["/usr/bin/env"])
            config.actions["fds"] = exec(["/bin/ls", "/proc/self/fd"])
        }
    }

    @Test func execRunsTheFixedArgvAndCapturesStdout() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"hello"}"#))
        #expect(r.ok == true)
        #expect(r["result"]?["stdout"] == "hello\n")
        #expect(r["result"]?["exit_code"] == .integer(0))
    }

    @Test func clientArgumentsAreSeparateArgvEntriesNeverAShell() throws {
        let d = daemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"say","args":["a b","$(id)",";rm -rf /","--"]}"#))
        #expect(r["result"]?["stdout"] == "a b|$(id)|;rm -rf /|--|")
        let tooMany = try #require(c.call(#"{"id":2,"op":"submit","action":"say","args":["1","2","3","4","5"]}"#))
        #expect(tooMany.errorCode == "bad_request")
        let none = try #require(c.call(#"{"id":3,"op":"submit","action":"hello","args":["x"]}"#))
        #expect(none.errorCode == "bad_request")
    }

    @Test func nonZeroExitFailsWithStderrKept() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"exit3"}"#))
        #expect(r.errorCode == "job_failed")
        #expect(r["result"]?["exit_code"] == .integer(3))
        #expect(r["result"]?["stderr"] == "oops\n")
    }

    @Test func floodingOutputIsCapped() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"flood"}"#))
        #expect(r["result"]?["stdout"]?.stringValue?.utf8.count == 1000)
        #expect(r["result"]?["stdout_truncated"] == true)
        #expect(r.errorCode == "timeout", "\(r)")
    }

    @Test func timeoutSendsSIGTERM() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"polite"}"#))
        #expect(r.errorCode == "timeout")
        #expect(r["result"]?["signal"] == .integer(Int64(SIGTERM)))
    }

    @Test func childIgnoringSIGTERMIsKilled() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"stubborn"}"#))
        #expect(r.errorCode == "timeout")
        #expect(r["result"]?["signal"] == .integer(Int64(SIGKILL)))
        #expect(r["result"]?["stdout"] == "started\n")
    }

    @Test func perJobTimeoutOverridesTheActionsTimeout() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"sleep","args":["5000"],"timeout_ms":50}"#))
        #expect(r.errorCode == "timeout")
    }

    @Test func childGetsACleanEnvironmentAndNoInheritedDescriptors() throws {
        let d = daemon()
        defer { d.stop() }
        let c = try d.client()
        let env = try #require(c.call(#"{"id":1,"op":"submit","action":"env"}"#))
        #expect(env["result"]?["stdout"] == "PATH=/usr/bin:/bin\n")
        let fds = try #require(c.call(#"{"id":2,"op":"submit","action":"fds"}"#))
        // ls itself holds 0, 1, 2 and the directory it lists (3).
        #expect(fds["result"]?["stdout"] == "0\n1\n2\n3\n")
    }
}
