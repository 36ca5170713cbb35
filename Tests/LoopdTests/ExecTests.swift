import Foundation
import LoopPlatform
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Exec actions — fixed argv, client arguments, output cap,
/// timeout with SIGTERM then SIGKILL, exit through a pidfd.
@Suite(.serialized) struct ExecTests {
    private func spec(_ argv: [String], _ tweak: (inout DaemonConfig.Exec) -> Void = { _ in }) -> DaemonConfig.Exec {
        var spec = DaemonConfig.Exec(argv: argv)
        spec.env = ["PATH": "/usr/bin:/bin"]
        tweak(&spec)
        return spec
    }

    private func exec(_ argv: [String], _ tweak: (inout DaemonConfig.Exec) -> Void = { _ in }) -> DaemonConfig.Action {
        var a = DaemonConfig.Action()
        a.allowAnyUser = true
        a.exec = spec(argv, tweak)
        return a
    }

    private func daemon() -> RunningDaemon {
        RunningDaemon(configure: { config in
            config.actions["hello"] = exec(["/bin/echo", "hello"])
            config.actions["say"] = exec(["/usr/bin/printf", "%s|"]) { $0.maxClientArgs = 4 }
            config.actions["polite"] = exec(["/bin/sleep", "30"]) { $0.timeoutMs = 100 }
            config.actions["exit3"] = exec(["/bin/sh", "-c", "echo oops >&2; exit 3"])
            config.actions["env"] = exec(["/usr/bin/env"])
            config.actions["fds"] = exec(["/bin/ls", "/proc/self/fd"])
        }, register: { daemon in
            // Report files go where the children, who run as another user,
            // may write: the test daemon's `childDirectory`, removed with it.
            let reports = (daemon.config.server.stateDirectory as NSString).deletingLastPathComponent + "/children"
            // Writes 4096 bytes, says so, then floods until the timeout stops it.
            let flood = spec(["/bin/sh", "-c", #"head -c 4096 /dev/zero | tr '\0' x; : > "$1"; exec yes 0123456789"#,
                              "flood", reports + "/flooded"]) { $0.outputCapBytes = 1000; $0.timeoutMs = 50 }
            daemon.register(action: ReportingExec(exec: execAction("flood", flood, daemon.config),
                                                  reported: reports + "/flooded"), named: "flood")
            // Takes SIGTERM with a handler that prints and reports, and goes on.
            let stubborn = spec(["/bin/sh", "-c",
                                 #"trap 'echo term; : > "$2"' TERM; echo started; : > "$1"; while :; do sleep 0.05; done"#,
                                 "stubborn", reports + "/installed", reports + "/survived"]) {
                $0.timeoutMs = 50; $0.killGraceMs = 100
            }
            daemon.register(action: ReportingExec(exec: execAction("stubborn", stubborn, daemon.config),
                                                  reported: reports + "/installed", afterSIGTERM: reports + "/survived"),
                            named: "stubborn")
        })
    }

    /// The scheduler remembers the action the last submit named, so that a
    /// run of submits of one action looks it up once; a reload that
    /// redefines it is what the very next submit of it runs.
    @Test func aReloadedActionRunsItsNewArgvFromTheNextSubmit() throws {
        let d = daemon()
        defer { d.stop() }
        let c = try d.client()
        for id in 1...2 {
            #expect(c.call(#"{"id":\#(id),"op":"submit","action":"hello"}"#)?["result"]?["stdout"] == "hello\n")
        }
        var fresh = d.daemon.config
        fresh.actions["hello"] = exec(["/bin/echo", "hello again"])
        d.daemon.reload(to: fresh)
        #expect(c.call(#"{"id":3,"op":"submit","action":"hello"}"#)?["result"]?["stdout"] == "hello again\n")
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
        // The child wrote 4096 bytes before its timeout could stop it: all
        // of them are read, the first 1000 kept.
        #expect(r["result"]?["stdout"]?.stringValue == String(repeating: "x", count: 1000))
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

    @Test func childSurvivingSIGTERMIsKilledAfterTheGrace() throws {
        let d = daemon()
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"stubborn"}"#))
        // The premise, in the child's own words: its handler was in place
        // before the timeout's SIGTERM ("started"), and the SIGTERM came and
        // was survived ("term").
        #expect(r["result"]?["stdout"] == "started\nterm\n")
        #expect(r.errorCode == "timeout")
        #expect(r["result"]?["signal"] == .integer(Int64(SIGKILL)))
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

/// `spec` as the daemon of `config` would contain it, for a test's own
/// wrapper around an exec action (its trees are not among those the
/// daemon's shutdown waits for).
func execAction(_ name: String, _ spec: DaemonConfig.Exec, _ config: DaemonConfig) -> ExecAction {
    let supervisor = ExecSupervisor.make(config, startedAtUnixMs: unixMilliseconds())
    do {
        let containment = try ExecContainment.resolve(spec, named: name, defaults: config.exec, host: .current(),
                                                      supervisor: supervisor)
        return ExecAction(name: name, spec: spec, containment: containment, supervisor: supervisor)
    } catch {
        fatalError("\(name): \(error)")
    }
}

/// An exec action whose job's deadline can pass only after its child has
/// reported reaching a point (it creates the file `reported`). The job's
/// timeout timer is on the worker's loop before the action starts, but a
/// timer that comes due while a handler runs fires on a later pass (R12):
/// `start` returns only after the report, so the timeout's SIGTERM finds the
/// child past that point however slowly it started. With `afterSIGTERM`,
/// the timeout handler likewise returns (and the SIGKILL grace timer can
/// fire) only after the child created that file. Each wait is bounded; a
/// child that never reports leaves the test to fail on its output.
private struct ReportingExec: JobAction {
    let exec: ExecAction
    let reported: String
    var afterSIGTERM: String?

    var defaultTimeoutMs: Int64? { exec.defaultTimeoutMs }

    func validate(args: [String]) throws(ProtocolError) { try exec.validate(args: args) }

    func start(_ context: ActionContext) {
        exec.start(context)
        waitUntil { access(reported, F_OK) == 0 }
        guard let afterSIGTERM, let sendSIGTERM = context.onTimeout else { return }
        context.onTimeout = {
            sendSIGTERM()
            waitUntil { access(afterSIGTERM, F_OK) == 0 }
        }
    }
}
