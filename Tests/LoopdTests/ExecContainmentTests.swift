import CThreadCredentials
import Foundation
import Glibc
import LoopPlatform
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Contained exec jobs: a job owns its whole process tree, which timeout,
/// cancel and shutdown end; the job ends with its main process; children
/// run as another user with no privileges, within their limits; what they
/// used is reported. Processes are found by a marker in their argv, never
/// by timing.
///
/// What this host can prove: the tests run as root, so children run as
/// `nobody`; job cgroups live on the unified hierarchy (a hybrid host has
/// one without controllers, so `tasks_max`, `memory_max` and `cpu_max` are
/// proved refused here and enforced only on a pure cgroup v2 host, where
/// `limitsOfTheJobsCgroupAreWritten` runs).
@Suite(.serialized, .enabled(if: getuid() == 0, "children run as another user: needs root"))
struct ExecContainmentTests {
    /// A shell command whose process carries `marker` in its argv ($0).
    private static func marked(_ marker: String, _ script: String) -> String {
        "/bin/sh -c '\(script)' \(marker)"
    }

    private func daemon(cgroup: DaemonConfig.ExecDefaults.CgroupMode = .auto, graceMs: Int64 = 10_000,
                        outputDrainMs: Int64 = 100, _ actions: [String: DaemonConfig.Exec]) -> RunningDaemon {
        RunningDaemon { config in
            config.exec.cgroup = cgroup
            config.exec.outputDrainMs = outputDrainMs
            config.server.shutdownGraceMs = graceMs
            for (name, spec) in actions {
                var a = DaemonConfig.Action()
                a.allowAnyUser = true
                a.exec = spec
                config.actions[name] = a
            }
        }
    }

    private func exec(_ argv: [String], _ tweak: (inout DaemonConfig.Exec) -> Void = { _ in }) -> DaemonConfig.Exec {
        var spec = DaemonConfig.Exec(argv: argv)
        spec.env = ["PATH": "/usr/bin:/bin"]
        tweak(&spec)
        return spec
    }

    /// A unique marker for this test's processes.
    private func newMarker(_ name: String) -> String { "loopd-mark-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    // MARK: the tree

    @Test(arguments: [DaemonConfig.ExecDefaults.CgroupMode.auto, .off])
    func aGrandchildHoldingStdoutNeitherKeepsTheJobRunningNorOutlivesIt(cgroup: DaemonConfig.ExecDefaults.CgroupMode) throws {
        let marker = newMarker("gc")
        let d = daemon(cgroup: cgroup, ["gc": exec(["/bin/sh", "-c", Self.marked(marker, "while :; do sleep 0.1; done") + " & echo started"])])
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"gc"}"#))
        #expect(r["state"] == "completed", "the job ended when its main process did: \(r)")
        #expect(r["result"]?["stdout"] == "started\n")
        #expect(waitUntil { markedProcesses(marker).isEmpty }, "the grandchild outlived its job: \(markedProcesses(marker))")
    }

    @Test(arguments: [DaemonConfig.ExecDefaults.CgroupMode.auto, .off])
    func aTreeIgnoringSIGTERMIsKilledWholePastItsTimeout(cgroup: DaemonConfig.ExecDefaults.CgroupMode) throws {
        let marker = newMarker("term")
        let script = "trap \"\" TERM; " + Self.marked(marker, "trap \"\" TERM; while :; do sleep 0.1; done")
            + " & echo started; while :; do sleep 0.1; done"
        let d = daemon(cgroup: cgroup, ["stubborn": exec(["/bin/sh", "-c", script]) { $0.timeoutMs = 300; $0.killGraceMs = 200 }])
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"stubborn"}"#))
        #expect(r.errorCode == "timeout", "\(r)")
        #expect(r["result"]?["signal"] == .integer(Int64(SIGKILL)))
        #expect(waitUntil { markedProcesses(marker).isEmpty }, "part of the tree survived: \(markedProcesses(marker))")
    }

    @Test func cancelEndsTheWholeRunningTree() throws {
        let marker = newMarker("cancel")
        let d = daemon(["tree": exec(["/bin/sh", "-c", Self.marked(marker, "while :; do sleep 0.1; done") + " & wait"]) { $0.timeoutMs = 600_000 }])
        defer { d.stop() }
        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"tree","wait":false}"#)?["job"]?.stringValue)
        #expect(waitUntil { !markedProcesses(marker).isEmpty }, "the tree never started")
        let cancel = try #require(c.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#))
        #expect(cancel.ok == true, "\(cancel)")
        #expect(c.waitForState(job, "cancelled") == "cancelled")
        #expect(waitUntil { markedProcesses(marker).isEmpty }, "part of the tree survived the cancel: \(markedProcesses(marker))")
    }

    @Test func stoppingLoopdEndsEveryTreeAfterTheGrace() throws {
        let marker = newMarker("shutdown")
        let script = "trap \"\" TERM; " + Self.marked(marker, "trap \"\" TERM; while :; do sleep 0.1; done") + " & wait"
        let d = daemon(graceMs: 100, ["tree": exec(["/bin/sh", "-c", script]) { $0.timeoutMs = 600_000; $0.killGraceMs = 200 }])
        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"tree","wait":false}"#)?["job"]?.stringValue)
        #expect(c.waitForState(job, "running") == "running")
        #expect(waitUntil { !markedProcesses(marker).isEmpty }, "the tree never started")
        d.stop()
        #expect(markedProcesses(marker).isEmpty, "loopd stopped and left part of a tree running: \(markedProcesses(marker))")
    }

    /// A job whose main process has ended is done: loopd stopping while it
    /// reads what the rest of the tree still writes cuts that short and
    /// ends the job with the main process's exit, not leaving it to run
    /// again.
    @Test func aJobDrainingItsOutputWhenLoopdStopsEndsWithItsMainProcess() throws {
        let main = newMarker("main"), grandchild = newMarker("drain")
        let script = Self.marked(grandchild, "while :; do sleep 0.1; done") + " & echo started"
        let d = daemon(graceMs: 100, outputDrainMs: 60_000, ["drain": exec(["/bin/sh", "-c", script, main])])
        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"drain","wait":false}"#)?["job"]?.stringValue)
        #expect(waitUntil { markedProcesses(main).isEmpty && !markedProcesses(grandchild).isEmpty },
                "the main process never ended with its child still running")
        c.send(#"{"id":2,"op":"wait","job":"\#(job)"}"#)
        d.stop()
        let r = try #require(c.readReply(), "no reply to the wait")
        #expect(r["state"] == "completed" && r["result"]?["stdout"] == "started\n", "\(r)")
        #expect(markedProcesses(grandchild).isEmpty, "the rest of the tree outlived loopd: \(markedProcesses(grandchild))")
    }

    /// loopd killed outright (SIGKILL, the OOM killer) cannot stop its
    /// jobs; what it leaves is documented (docs/OPERATIONS.md, "Containing
    /// exec jobs"): each job's main process gets SIGKILL with it (the
    /// parent-death signal); what that process started lives on in the
    /// job's cgroup until loopd starts again and kills it, or, without job
    /// cgroups, lives on (under systemd the unit's cgroup is killed anyway).
    @Test(arguments: [DaemonConfig.ExecDefaults.CgroupMode.auto, .off])
    func aLoopdKilledOutrightTakesItsJobsMainProcessesAndItsNextStartTheRest(
        cgroup: DaemonConfig.ExecDefaults.CgroupMode
    ) throws {
        let main = newMarker("main"), grandchild = newMarker("grandchild")
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = Self.marked(grandchild, "while :; do sleep 0.1; done") + " & while :; do sleep 0.1; done"
        let d = DurableReplayTests.DaemonProcess(directory: dir, execConfig: "cgroup = \"\(cgroup.rawValue)\"", extraConfig: """
            [actions.tree]
            argv = ["/bin/sh", "-c", \(jsonString(script)), "\(main)"]
            timeout_ms = 600000

            """)
        try d.start()
        let c = try TestClient(path: d.socketPath)
        #expect(c.call(#"{"id":1,"op":"submit","action":"tree","wait":false}"#)?.ok == true)
        #expect(waitUntil { !markedProcesses(main).isEmpty && !markedProcesses(grandchild).isEmpty }, "the tree never started")
        d.kill()
        #expect(waitUntil { markedProcesses(main).isEmpty }, "the job's main process outlived loopd: \(markedProcesses(main))")
        #expect(!markedProcesses(grandchild).isEmpty, "the premise: what the main process started lives on")
        if cgroup == .auto, Self.hasJobCgroups {
            try d.start()
            #expect(waitUntil { markedProcesses(grandchild).isEmpty }, "loopd's next start left the killed loopd's tree running")
            d.terminate()
        } else {
            for pid in markedProcesses(grandchild) { Glibc.kill(pid, SIGKILL) }
        }
    }

    /// Job cgroups can be made here (a unified hierarchy loopd may write).
    static let hasJobCgroups = ExecSupervisor.make(DaemonConfig(), startedAtUnixMs: 0).cgroups != nil

    /// A leftover job group is its maker's while a process with the maker's
    /// pid runs that started no later than the maker did: a loopd that got
    /// its killed predecessor's pid (a restart in a PID namespace, or pid
    /// reuse) still removes what the predecessor left, and the groups of a
    /// loopd that runs are left alone.
    @Test(.enabled(if: hasJobCgroups, "needs job cgroups"))
    func leftoverGroupsAreToldByTheirMakersPidAndStart() throws {
        let state = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        func cgroups(startedAt: Int64) throws -> JobCgroups {
            try JobCgroups.prepare(wanting: [], stateDirectory: state, daemonStartedAtUnixMs: startedAt).get()
        }
        let now = unixMilliseconds()
        // A loopd that had this process's pid an hour ago, and left a job running.
        let killed = try cgroups(startedAt: now - 3_600_000).makeGroup(limits: [])
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["600"]
        try sleeper.run()
        try killed.move(sleeper.processIdentifier)
        // A loopd that runs now, with a job group of its own.
        let running = try cgroups(startedAt: now).makeGroup(limits: [])
        defer { try? running.remove() }

        #expect(try cgroups(startedAt: now).removeLeftovers() == 1)
        #expect(waitUntil { !sleeper.isRunning }, "the killed loopd's job still runs")
        #expect(!FileSystem.exists(killed.path), "the killed loopd's group is still there")
        #expect(FileSystem.exists(running.path), "a running loopd's group was removed")
        if sleeper.isRunning { sleeper.terminate() }
        sleeper.waitUntilExit()
    }

    /// Job cgroups are set up at start: a reload keeps `[exec] cgroup` (the
    /// reload record names it among what needs a restart).
    @Test func aReloadKeepsTheCgroupModeUntilARestart() throws {
        let d = daemon(cgroup: .auto, [:])
        defer { d.stop() }
        var fresh = d.daemon.config
        fresh.exec.cgroup = .off
        d.daemon.reload(to: fresh)
        #expect(d.daemon.onMainThread { $0.config.exec.cgroup } == .auto)
    }

    // MARK: identity and limits

    @Test func childrenRunAsTheConfiguredUserWithoutPrivileges() throws {
        let d = daemon(["who": exec(["/bin/sh", "-c", "id -u; id -g; grep -E '^(NoNewPrivs|CapEff|CapAmb):' /proc/self/status"])])
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"who"}"#))
        let nobody = try #require(getpwnam("nobody")?.pointee)
        let lines = (r["result"]?["stdout"]?.stringValue ?? "").split(separator: "\n").map { $0.replacingOccurrences(of: "\t", with: " ") }
        #expect(lines == ["\(nobody.pw_uid)", "\(nobody.pw_gid)", "CapEff: 0000000000000000", "CapAmb: 0000000000000000",
                          "NoNewPrivs: 1"], "\(r)")
    }

    /// Started as its unit starts it (its own user, ambient capabilities),
    /// loopd stays readable by that user, as Swift's crash backtracer must
    /// read it: its /proc entries stay that user's (a process that is not
    /// dumpable has root's), also after a child that switched users while
    /// it shared loopd's memory, which makes the kernel mark that memory
    /// not dumpable.
    @Test(.enabled(if: LoopdAsAnotherUser.isAvailable, LoopdAsAnotherUser.unavailableReason))
    func loopdStaysReadableByItsOwnUserAfterStartingChildrenAsAnother() throws {
        let d = try LoopdAsAnotherUser(tables: LoopdAsAnotherUser.twoWorkers + """
            [actions.whoami]
            argv = ["/usr/bin/id", "-u"]
            """, execUser: "nobody")
        defer { d.stop() }
        func procOwner() -> UInt32? {
            var st = stat()
            return stat("/proc/\(d.pid)/status", &st) == 0 ? st.st_uid : nil
        }
        #expect(procOwner() == Account.loopd.uid, "not dumpable from the start")
        let r = try #require(try d.client(as: .root).call(#"{"id":1,"op":"submit","action":"whoami"}"#))
        #expect(r["result"]?["stdout"]?.stringValue == "\(Account.nobody.uid)\n", "\(r)")
        #expect(procOwner() == Account.loopd.uid, "not dumpable after a child switched users")
    }

    /// A loopd that is not root keeps its capabilities across the switch
    /// to the job's user, and no_new_privs would still let a program with
    /// file capabilities have those it held: a child holds none. The
    /// program here is a copy of grep given CAP_SETUID and CAP_KILL
    /// (permitted, not effective) as a file capability.
    @Test(.enabled(if: LoopdAsAnotherUser.isAvailable, LoopdAsAnotherUser.unavailableReason))
    func aChildOfALoopdWithCapabilitiesGetsNoneFromAProgramsFileCapabilities() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o755)
        let program = dir + "/capable-grep"
        try FileManager.default.copyItem(atPath: "/bin/grep", toPath: program)
        chmod(program, 0o755)
        let setuidAndKill: UInt32 = 1 << 7 | 1 << 5
        try #require(cthreadcred_set_file_capabilities(program, setuidAndKill) == 0,
                     "this filesystem keeps no file capabilities: errno \(errno)")
        let d = try LoopdAsAnotherUser(tables: LoopdAsAnotherUser.twoWorkers + """
            [actions.caps]
            argv = ["\(program)", "^CapPrm", "/proc/self/status"]
            """, execUser: "nobody")
        defer { d.stop() }
        let r = try #require(try d.client(as: .root).call(#"{"id":1,"op":"submit","action":"caps"}"#))
        #expect(r["result"]?["stdout"]?.stringValue?.replacingOccurrences(of: "\t", with: " ") == "CapPrm: 0000000000000000\n", "\(r)")
    }

    @Test func resourceLimitsApplyToEveryChild() throws {
        let d = daemon(["limited": exec(["/bin/sh", "-c", "ulimit -n; ulimit -t; ulimit -v"]) {
            $0.limitNofile = 32
            $0.limitCPUSeconds = 5
            $0.limitAddressSpaceBytes = 1 << 30
        }])
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"limited"}"#))
        #expect(r["result"]?["stdout"]?.stringValue == "32\n5\n\(1 << 20)\n", "\(r)")
    }

    @Test func usageIsReportedInTheReplyStatusAndJobs() throws {
        let d = daemon(["burn": exec(["/bin/sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])])
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"burn"}"#))
        let usage = try #require(r["usage"], "\(r)")
        let cpu = (usage["cpu_user_usec"]?.integerValue ?? 0) + (usage["cpu_system_usec"]?.integerValue ?? 0)
        #expect(cpu > 0, "a busy loop used no CPU: \(usage)")
        // A peak only where the job's cgroup keeps one (the memory controller).
        let countsMemory = ExecSupervisor.make(DaemonConfig(), startedAtUnixMs: 0).cgroups?.countsMemory == true
        #expect(countsMemory ? (usage["memory_peak_bytes"]?.integerValue ?? 0) > 0 : usage["memory_peak_bytes"] == .null,
                "\(usage)")
        #expect(["cgroup", "rusage"].contains(usage["source"]?.stringValue ?? ""))
        let job = try #require(r["job"]?.stringValue)
        let status = try #require(c.call(#"{"id":2,"op":"status","job":"\#(job)"}"#))
        #expect(status["usage"] == usage)
        let list = try #require(c.call(#"{"id":3,"op":"jobs","action":"burn"}"#))
        #expect(list["jobs"]?.arrayValue?.first?["usage"] == usage, "\(list)")
        let metrics = try #require(c.call(#"{"id":4,"op":"metrics"}"#)?["text"]?.stringValue)
        #expect(metrics.contains(#"loopd_job_cpu_seconds_total{action="burn""#), "the CPU counter is in the metrics")
    }

    // MARK: what a child can reach

    /// The child tries each way out of its job and says what it could do:
    /// read or write loopd's state, signal loopd, signal another job's
    /// process (of the same user), connect to loopd's socket
    /// (Tests/Fixtures/escape-probe.sh, which the systemd test runs too).
    static let escapeProbe = RepositoryFile.read("Tests/Fixtures/escape-probe.sh")

    @Test func aChildCannotReachWhatIsNotItsOwn() throws {
        let marker = newMarker("victim")
        let d = daemon([
            "victim": exec(["/bin/sh", "-c", Self.marked(marker, "while :; do sleep 0.1; done") + " & wait"]) { $0.timeoutMs = 600_000 },
            "probe": exec(["/bin/sh", "-c", try #require(Self.escapeProbe), "probe"]) { $0.maxClientArgs = 4 },
        ])
        defer { d.stop() }
        let c = try d.client()
        let victim = try #require(c.call(#"{"id":1,"op":"submit","action":"victim","worker":"w2","wait":false}"#)?["job"]?.stringValue)
        #expect(waitUntil { !markedProcesses(marker).isEmpty }, "the other job never started")
        let other = try #require(markedProcesses(marker).first)
        let state = d.daemon.config.server.stateDirectory
        let args = [state, d.socketPath, String(getpid()), String(other)].map { "\"\($0)\"" }.joined(separator: ",")
        let r = try #require(c.call(#"{"id":2,"op":"submit","action":"probe","worker":"w1","args":[\#(args)]}"#))
        let report = (r["result"]?["stdout"]?.stringValue ?? "").split(separator: "\n").map(String.init)
        // The controls show the probe itself works: each way out is denied, not broken.
        var expected = ["control-read: allowed", "control-signal-self: allowed", "control-python: allowed",
                        "read-state: denied", "read-journal: denied", "write-state: denied", "signal-loopd: denied",
                        "signal-other-job: denied", "connect-socket: denied"]
        if Privileges.landlockABI < ChildProcess.LandlockScope.minimumABI {
            // Without Landlock scopes (Linux before 6.12) jobs of one user can signal each other.
            expected[7] = "signal-other-job: allowed"
        }
        #expect(report == expected, "\(r)")
        _ = c.call(#"{"id":3,"op":"cancel","job":"\#(victim)"}"#)
    }

    // MARK: what this host cannot honour

    private func refusal(_ configure: (inout DaemonConfig) -> Void, host: ExecContainment.Host) -> ExecContainment.Refusal? {
        var config = DaemonConfig()
        config.exec.user = "nobody"
        var a = DaemonConfig.Action()
        a.exec = DaemonConfig.Exec(argv: ["/bin/true"])
        config.actions["job"] = a
        configure(&config)
        do {
            _ = try ExecContainment.resolve(config, host: host, supervisor: ExecSupervisor(cgroups: nil, unavailable: "test host"))
            return nil
        } catch {
            return error
        }
    }

    private let root = ExecContainment.Host(daemonUID: 0, missingCapabilities: [], landlockABI: 6)

    @Test func childrenNeverRunAsLoopdsOwnUserOrRoot() throws {
        let nobody = try #require(getpwnam("nobody")?.pointee.pw_uid)
        let asNobody = ExecContainment.Host(daemonUID: nobody, missingCapabilities: [], landlockABI: 6)
        #expect(refusal({ _ in }, host: asNobody)?.key == "exec.user", "nobody's own loopd may not run children as nobody")
        #expect(refusal({ $0.exec.user = "root" }, host: root)?.reason.contains("never run as root") == true)
        #expect(refusal({ $0.actions["job"]?.exec?.user = "0" }, host: asNobody)?.key == "actions.job.user")
        #expect(refusal({ $0.exec.user = "" }, host: root)?.reason.contains("name the user") == true,
                "a loopd that can switch users may not run children as itself")
        #expect(refusal({ $0.exec.user = "no-such-user-here" }, host: root)?.reason == "no user named \"no-such-user-here\"")
    }

    @Test func aLoopdThatCannotSwitchUsersSaysWhatItLacks() throws {
        let plain = ExecContainment.Host(daemonUID: 4242, missingCapabilities: ["CAP_SETUID", "CAP_SETGID", "CAP_KILL"], landlockABI: 6)
        let r = try #require(refusal({ _ in }, host: plain))
        #expect(r.key == "exec.user")
        #expect(r.reason.contains("without CAP_SETUID, CAP_SETGID, CAP_KILL"), "\(r)")
        #expect(refusal({ $0.exec.user = "" }, host: plain) == nil, "\"\" is how such a loopd runs children as itself")
    }

    @Test func aLimitThisHostCannotEnforceStopsTheStartNamingTheKey() throws {
        for (key, set) in [("tasks_max", { (e: inout DaemonConfig.Exec) in e.tasksMax = 64 }),
                           ("memory_max", { (e: inout DaemonConfig.Exec) in e.memoryMaxBytes = 1 << 28 }),
                           ("cpu_max", { (e: inout DaemonConfig.Exec) in e.cpuMaxPercent = 50 })] {
            let r = refusal({ set(&$0.actions["job"]!.exec!) }, host: root)
            #expect(r?.key == "actions.job.\(key)")
            #expect(r?.reason.contains("no job cgroups (test host)") == true, "\(String(describing: r))")
        }
        // Resource limits need no cgroup.
        #expect(refusal({ $0.actions["job"]?.exec?.limitNofile = 64 }, host: root) == nil)
    }

    /// A child may lower a resource limit, never raise it past loopd's own
    /// hard limit (the unit's LimitNOFILE=, say): such a limit stops the
    /// start, naming the key, instead of failing every job.
    @Test func aResourceLimitAboveLoopdsOwnStopsTheStartNamingTheKey() throws {
        var host = root
        host.hardLimits = [ChildProcess.ResourceLimit.openFiles(0).resource: 1088]
        #expect(refusal({ $0.actions["job"]?.exec?.limitNofile = 1088 }, host: host) == nil)
        let r = refusal({ $0.actions["job"]?.exec?.limitNofile = 4096 }, host: host)
        #expect(r?.key == "actions.job.limit_nofile")
        #expect(r?.reason.contains("above loopd's own hard limit (1088)") == true, "\(String(describing: r))")
    }

    @Test func aRealDaemonRefusesToStartWithALimitItCannotEnforce() throws {
        let supervisor = ExecSupervisor.make(DaemonConfig(), startedAtUnixMs: 0)
        let delegated = supervisor.cgroups?.root.availableControllers ?? []
        guard !delegated.contains("pids") else { return }  // a pure v2 host: limitsOfTheJobsCgroupAreWritten
        var config = DaemonConfig()
        config.exec.user = "nobody"
        config.server.socketPath = makeTempDirectory() + "/loopd.sock"
        config.server.stateDirectory = (config.server.socketPath as NSString).deletingLastPathComponent + "/state"
        var a = DaemonConfig.Action()
        a.exec = DaemonConfig.Exec(argv: ["/bin/true"])
        a.exec?.tasksMax = 16
        config.actions["capped"] = a
        #expect {
            try Daemon(config: config).run()
        } throws: { error in
            guard case DaemonError.containment(let key, let reason) = error else { return false }
            return key == "actions.capped.tasks_max" && reason.contains("pids")
        }
    }

    @Test func limitsOfTheJobsCgroupAreWritten() throws {
        var config = DaemonConfig()
        var a = DaemonConfig.Action()
        a.exec = DaemonConfig.Exec(argv: ["/bin/true"])
        a.exec?.tasksMax = 16
        config.actions["probe"] = a
        let supervisor = ExecSupervisor.make(config, startedAtUnixMs: unixMilliseconds())
        guard let cgroups = supervisor.cgroups, cgroups.controllers.contains("pids") else {
            return  // a hybrid host: the pids controller is not delegated (aLimitThisHostCannotEnforce… runs instead)
        }
        let d = daemon(["capped": exec(["/bin/sh", "-c", "cat /sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/pids.max"]) {
            $0.tasksMax = 16
        }])
        defer { d.stop() }
        let r = try #require(try d.client().call(#"{"id":1,"op":"submit","action":"capped"}"#))
        #expect(r["result"]?["stdout"] == "16\n", "\(r)")
    }
}

/// `text` as a TOML (and JSON) basic string.
func jsonString(_ text: String) -> String { JSON.string(text).serialized() }

/// The pids of processes that have `marker` as one whole argument: a shell
/// whose script only mentions the marker of a child it will start is not
/// that child. (Read with LoopPlatform: Foundation's file reading leaks its
/// buffer on a /proc file, whose size is 0, and AddressSanitizer says so.)
func markedProcesses(_ marker: String) -> [Int32] {
    let names = (try? FileSystem.directoryEntries("/proc")) ?? []
    let wanted = Array(marker.utf8)
    return names.compactMap { name -> Int32? in
        guard let pid = Int32(name),
              case .success(let argv) = FileSystem.readFile("/proc/\(name)/cmdline", limit: 1 << 20) else { return nil }
        return argv.split(separator: 0).contains { $0.elementsEqual(wanted) } ? pid : nil
    }
}
