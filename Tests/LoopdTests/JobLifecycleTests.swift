import Foundation
import Glibc
import Logging
import LoopdProtocol
import Synchronization
import Testing
@testable import LoopdCore

/// The job state machine: which moves the life cycle allows, and that a
/// real job goes through them, each logged in one place.
@Suite struct JobStateMachineTests {
    private static let sample: [Job.State] = [
        .accepted, .awaitingCommit, .delayed, .queued, .running,
        .ended(.completed), .ended(.failed), .ended(.timedOut), .ended(.cancelled), .forgotten,
    ]

    private static func name(_ s: Job.State) -> String {
        switch s {
        case .ended: "ended"
        default: s.description
        }
    }

    /// Every pair of states: the allowed moves are exactly these.
    @Test func theLifeCycleAllowsExactlyItsMoves() {
        let allowed: Set<String> = [
            "accepted>awaiting commit", "accepted>delayed", "accepted>queued", "accepted>ended",
            "awaiting commit>delayed", "awaiting commit>queued", "awaiting commit>ended",
            "delayed>running", "delayed>ended", "queued>running", "queued>ended", "running>ended",
            "ended>forgotten",
            // A failed attempt that is retried goes back to wait (durable: for its commit).
            "delayed>awaiting commit", "queued>awaiting commit", "running>awaiting commit",
            "delayed>delayed", "queued>delayed", "running>delayed",
            "delayed>queued", "queued>queued", "running>queued",
        ]
        for from in Self.sample {
            for to in Self.sample {
                let key = "\(Self.name(from))>\(Self.name(to))"
                #expect(from.allows(to) == allowed.contains(key), "\(from) -> \(to)")
            }
        }
    }

    /// An outcome's error code decides the end: timeout and cancelled have
    /// their own; every other failure is `failed`.
    @Test func outcomesMapToTheirEnds() {
        #expect(Job.End(.success(.object([]))) == .completed)
        #expect(Job.End(.failure(ProtocolError(.jobFailed, "x"), result: .object([]))) == .failed)
        #expect(Job.End(.failure(ProtocolError(.timeout, "x"), result: .object([]))) == .timedOut)
        #expect(Job.End(.failure(ProtocolError(.cancelled, "x"), result: .object([]))) == .cancelled)
        #expect(Job.End(.failure(ProtocolError(.journalUnavailable, "x"), result: .object([]))) == .failed)
    }

    /// A move the life cycle does not allow traps (in debug builds, which the tests are).
    @Test func anIllegalMoveTraps() async {
        await #expect(processExitsWith: .failure) {
            let fixture = JobFixture()
            let job = fixture.job("j1")
            let scheduler = JobScheduler(config: DaemonConfig(), loop: .current, actions: [:], journal: nil, log: .silent,
                                         jobIDKey: JobIDKey(1, 2))
            scheduler.move(job, to: .running)  // accepted -> running skips the queue
        }
    }

    /// A job's moves through a real daemon, as the debug log records them.
    @Test func aJobsMovesAreLoggedInOrder() throws {
        let records = CapturedLog()
        var logger = Logger(label: "loopd") { _ in records }
        logger.logLevel = .debug
        let d = RunningDaemon(log: DaemonLogger(logger))
        defer { d.stop() }
        let c = try d.client()
        let reply = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["1"],"worker":"w1"}"#))
        let job = try #require(reply["job"]?.stringValue)
        #expect(reply["state"] == "completed")
        // A request sent after the reply finds the end recorded (and so logged).
        #expect(c.call(#"{"id":2,"op":"status","job":"\#(job)"}"#)?["state"] == "completed")
        let moves = records.messages.filter { $0.hasPrefix("job \(job): ") }.map { $0.dropFirst("job \(job): ".count) }
        #expect(moves == ["accepted -> queued", "queued -> running", "running -> ended completed"])
    }
}

/// A swift-log handler that keeps the messages it is given, with their metadata.
final class CapturedLog: LogHandler, @unchecked Sendable {
    private let lock = NSLock()  // guards `kept`
    private var kept: [(message: String, metadata: Logger.Metadata)] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.withLock { kept.append(("\(event.message)", event.metadata ?? [:])) }
    }

    var messages: [String] { lock.withLock { kept.map(\.message) } }
    var records: [(message: String, metadata: Logger.Metadata)] { lock.withLock { kept } }
}

/// Placement: `any` and `key` never strand work on a worker held by its
/// mode, and an explicit-only worker takes only jobs that name it.
@Suite(.serialized) struct PlacementTests {
    /// The shipped production config, on a private socket and state directory.
    private static func production() -> RunningDaemon {
        RunningDaemon { config in
            let socket = config.server.socketPath, state = config.server.stateDirectory
            config = try! ConfigLoader.load(path: productionConfigPath)
            config.server.socketPath = socket
            config.server.stateDirectory = state
            config.server.socketGroup = nil
            config.server.socketGroupID = nil
            config.journal.fsync = false
            // The package creates loopd-job; a test machine has nobody.
            config.exec.user = getuid() == 0 ? "nobody" : ""
        }
    }

    @Test("production config: 200 pipelined jobs without a worker all complete, none on ops")
    func pipelinedJobsWithoutAWorkerComplete() throws {
        let d = Self.production()
        defer { d.stop() }
        let c = try d.client()
        for k in 0..<200 { c.send(#"{"id":\#(k),"op":"submit","action":"echo","args":["\#(k)"]}"#) }
        var workers: [String: Int] = [:]
        for _ in 0..<200 {
            let r = try #require(c.readReply())
            #expect(r["state"] == "completed")
            workers[r["worker"]?.stringValue ?? "?", default: 0] += 1
        }
        #expect(workers["ops"] == nil)
        #expect(workers.values.reduce(0, +) == 200)
    }

    @Test("production config: six keys all complete, none on ops, each key on one worker")
    func keyedJobsComplete() throws {
        let d = Self.production()
        defer { d.stop() }
        let c = try d.client()
        for key in ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"] {
            var seen = Set<String>()
            for i in 0..<3 {
                let r = try #require(c.call(#"{"id":\#(i),"op":"submit","action":"noop","key":"\#(key)"}"#))
                #expect(r["state"] == "completed", "\(key)")
                seen.insert(r["worker"]?.stringValue ?? "?")
            }
            #expect(seen.count == 1 && !seen.contains("ops"), "\(key): \(seen)")
            #expect(seen.first == ["w1", "w2"][Int(fnv1a(key) % 2)])
        }
    }

    @Test("production config: ops takes a job that names it; workers reports its placement")
    func explicitWorkerTakesNamedJobs() throws {
        let d = Self.production()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["x"],"worker":"ops","mode":"maintenance"}"#))
        #expect(r["worker"] == "ops" && r["state"] == "completed")
        let held = try #require(c.call(#"{"id":2,"op":"submit","action":"echo","worker":"ops","wait":false}"#))
        #expect(held["state"] == "held")
        let list = try #require(c.call(#"{"id":3,"op":"workers"}"#)?["workers"]?.arrayValue)
        #expect(list.map { $0["placement"]?.stringValue ?? "?" } == ["auto", "auto", "explicit"])
    }

    /// `any` prefers an automatic worker whose mode runs the job now; only
    /// when none does is the job held, and then the reply says so.
    @Test func anyPrefersAWorkerWhoseModeRunsTheJob() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        for k in 0..<20 {
            let r = try #require(c.call(#"{"id":\#(k),"op":"submit","action":"noop"}"#))
            #expect(r["worker"] == "w2" && r["state"] == "completed")
        }
        #expect(c.call(#"{"id":2,"op":"mode","worker":"w2","mode":"maintenance"}"#)?.ok == true)
        let held = try #require(c.call(#"{"id":3,"op":"submit","action":"noop","wait":false}"#))
        #expect(held["state"] == "held")
        let job = try #require(held["job"]?.stringValue)
        // A job for the mode they run goes to one of them and runs.
        let m = try #require(c.call(#"{"id":4,"op":"submit","action":"noop","mode":"maintenance"}"#))
        #expect(m["state"] == "completed")
        #expect(c.call(#"{"id":5,"op":"mode","worker":"w1","mode":"default"}"#)?.ok == true)
        #expect(c.call(#"{"id":6,"op":"mode","worker":"w2","mode":"default"}"#)?.ok == true)
        #expect(c.call(#"{"id":7,"op":"wait","job":"\#(job)"}"#)?["state"] == "completed")
    }

    @Test("config: placement is auto or explicit, and one worker at least is auto")
    func placementConfig() throws {
        let base = "[[workers]]\nname = \"a\"\n"
        #expect(try ConfigLoader.parse(base, origin: "t").workers.first?.placement == .auto)
        #expect(try ConfigLoader.parse(base + "placement = \"auto\"\n[[workers]]\nname = \"b\"\nplacement = \"explicit\"\n", origin: "t")
            .workers.map(\.placement) == [.auto, .explicit])
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(base + "placement = \"sometimes\"\n", origin: "t") }
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(base + "placement = \"explicit\"\n", origin: "t") }
    }
}

/// Cancel, wait and the times of a job's life.
@Suite(.serialized) struct JobLifecycleTests {
    /// Polls `status` until `job` is in `wanted` (bounded; the bound only stops a hung test).
    private func waitForState(_ c: TestClient, _ job: String, _ wanted: String) -> String {
        var state = ""
        for _ in 0..<4000 {
            state = c.call(#"{"id":"s","op":"status","job":"\#(job)"}"#)?["state"]?.stringValue ?? "?"
            if state == wanted { break }
            usleep(5000)
        }
        return state
    }

    /// Waits (bounded) until `path` exists.
    private func waitForFile(_ path: String) -> Bool {
        for _ in 0..<4000 {
            if FileManager.default.fileExists(atPath: path) { return true }
            usleep(5000)
        }
        return false
    }

    /// An exec action running `sh -c SCRIPT`, with a short kill grace.
    private func shell(_ script: String, graceMs: Int64 = 300) -> (inout DaemonConfig) -> Void {
        { config in
            var exec = DaemonConfig.Exec(argv: ["/bin/sh", "-c", script, "sh"])
            exec.maxClientArgs = 1
            exec.killGraceMs = graceMs
            exec.timeoutMs = 600_000  // far past any wait here: only a cancel ends these children
            config.actions["shell"] = DaemonConfig.Action(allowUsers: [getuid()], exec: exec)
        }
    }

    @Test("cancel of a running exec job: SIGTERM, then SIGKILL when the child ignores it; it ends cancelled")
    func cancelRunningExecEscalatesToSIGKILL() throws {
        let d = RunningDaemon(configure: shell(#"trap 'echo term >> "$1.log"' TERM; : > "$1"; while :; do sleep 0.05; done"#))
        defer { d.stop() }
        let marker = d.childDirectory + "/ready"
        let a = try d.client(), b = try d.client()
        a.send(#"{"id":"run","op":"submit","action":"shell","args":["\#(marker)"],"worker":"w1"}"#)
        #expect(waitForFile(marker))  // the child's TERM handler is installed
        let job = try #require(b.call(#"{"id":1,"op":"jobs","state":"running"}"#)?["jobs"]?.arrayValue?.first?["job"]?.stringValue)
        let cancel = try #require(b.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#))
        #expect(cancel["cancelled"] == true && cancel["state"] == "cancelled" && cancel["started"] == true)
        let reply = try #require(a.readReply())
        #expect(reply.errorCode == "cancelled" && reply["state"] == "cancelled")
        #expect(reply["result"]?["signal"] == .integer(Int64(SIGKILL)))
        #expect((try? String(contentsOfFile: marker + ".log", encoding: .utf8)) == "term\n")
        let status = try #require(b.call(#"{"id":3,"op":"status","job":"\#(job)"}"#))
        #expect(status["cancelled_by"] == .integer(Int64(getuid())))
        #expect(status["started_at"] != nil && status["finished_at"] != nil && status["run_ms"] != nil)
        #expect(b.call(#"{"id":4,"op":"stats"}"#)?["cancelled"] == .integer(1))
    }

    @Test("cancel of a running exec job that honours SIGTERM: it ends on SIGTERM")
    func cancelRunningExecStopsOnSIGTERM() throws {
        let d = RunningDaemon(configure: shell(#": > "$1"; exec sleep 60"#, graceMs: 60_000))
        defer { d.stop() }
        let marker = d.childDirectory + "/ready"
        let a = try d.client(), b = try d.client()
        let ack = try #require(a.call(#"{"id":"run","op":"submit","action":"shell","args":["\#(marker)"],"wait":false}"#))
        let job = try #require(ack["job"]?.stringValue)
        #expect(waitForFile(marker))
        #expect(waitForState(b, job, "running") == "running")
        #expect(b.call(#"{"id":1,"op":"cancel","job":"\#(job)"}"#)?["cancelled"] == true)
        let status = try #require(b.call(#"{"id":2,"op":"status","job":"\#(job)"}"#))
        #expect(status["state"] == "cancelled")
        #expect(status["result"]?["signal"] == .integer(Int64(SIGTERM)))
        #expect(status["error"]?["code"] == "cancelled")
    }

    @Test("cancel of a running built-in ends it at once; cancel after the end does nothing")
    func cancelRunningSleep() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["60000"],"wait":false}"#)?["job"]?.stringValue)
        #expect(waitForState(c, job, "running") == "running")
        let cancel = try #require(c.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#))
        #expect(cancel["cancelled"] == true && cancel["state"] == "cancelled" && cancel["started"] == true)
        let again = try #require(c.call(#"{"id":3,"op":"cancel","job":"\#(job)"}"#))
        #expect(again["cancelled"] == false && again["state"] == "cancelled" && again["started"] == true)
        // The worker runs the next job: the cancelled one no longer holds it.
        #expect(c.call(#"{"id":4,"op":"submit","action":"echo","args":["next"]}"#)?["result"]?["output"] == "next")
    }

    @Test("wait: from a second connection, after the submitter left, many waiters, and a timeout")
    func waitForAJob() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let submitter = try d.client()
        let blocker = try #require(submitter.call(#"{"id":1,"op":"submit","action":"sleep","args":["60000"],"worker":"w1","wait":false}"#)?["job"]?.stringValue)
        let queued = try #require(submitter.call(#"{"id":2,"op":"submit","action":"echo","args":["done"],"worker":"w1","wait":false}"#)?["job"]?.stringValue)
        submitter.hangUp()
        let waiters = try (0..<3).map { _ in try d.client() }
        for (k, w) in waiters.enumerated() { w.send(#"{"id":\#(k),"op":"wait","job":"\#(queued)"}"#) }
        let timed = try d.client()
        let early = try #require(timed.call(#"{"id":"t","op":"wait","job":"\#(queued)","timeout_ms":50}"#))
        #expect(early.ok == true && early["state"] == "queued" && early["result"] == nil)
        // A waiter that disconnects costs nothing: its entry goes with it.
        let leaver = try d.client()
        leaver.send(#"{"id":"gone","op":"wait","job":"\#(queued)"}"#)
        leaver.hangUp()
        #expect(timed.call(#"{"id":"c","op":"cancel","job":"\#(blocker)"}"#)?["cancelled"] == true)
        for (k, w) in waiters.enumerated() {
            let r = try #require(w.readReply())
            #expect(r["id"] == .integer(Int64(k)) && r["state"] == "completed" && r["result"]?["output"] == "done")
        }
        #expect(d.daemon.onMainThread { $0.scheduler.waiters.isEmpty })
        // A finished job answers at once.
        #expect(timed.call(#"{"id":"f","op":"wait","job":"\#(queued)"}"#)?["state"] == "completed")
        #expect(timed.call(#"{"id":"u","op":"wait","job":"nope"}"#)?.errorCode == "unknown_job")
    }

    @Test("status and jobs carry RFC 3339 times and durations")
    func timestamps() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["20"]}"#)?["job"]?.stringValue)
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        let s = try #require(c.call(#"{"id":2,"op":"status","job":"\#(job)"}"#))
        let submitted = try #require(s["submitted_at"]?.stringValue.flatMap(parseRFC3339))
        let started = try #require(s["started_at"]?.stringValue.flatMap(parseRFC3339))
        let finished = try #require(s["finished_at"]?.stringValue.flatMap(parseRFC3339))
        #expect(before <= submitted && submitted <= started && started <= finished && finished <= after)
        #expect(s["queue_ms"] == .integer(started - submitted))
        #expect(s["run_ms"] == .integer(finished - started))
        #expect(finished - started >= 20)  // a sleep of 20 ms ran at least that long
        // A queued job has only its submission time.
        let held = try #require(c.call(#"{"id":3,"op":"submit","action":"noop","delay_ms":60000,"wait":false}"#)?["job"]?.stringValue)
        let h = try #require(c.call(#"{"id":4,"op":"status","job":"\#(held)"}"#))
        #expect(h["submitted_at"] != nil && h["started_at"] == nil && h["finished_at"] == nil && h["queue_ms"] == nil)
        #expect(Timestamp.format(unixMilliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.format(unixMilliseconds: 951_782_400_123) == "2000-02-29T00:00:00.123Z")
    }

    @Test("jobs: filters, and paging under concurrent submits lists every job once, in submission order")
    func listJobs() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        var before: [String] = []
        for k in 0..<60 {
            let action = k % 3 == 0 ? "noop" : "echo"
            let worker = k % 2 == 0 ? "w1" : "w2"
            before.append(try #require(c.call(#"{"id":\#(k),"op":"submit","action":"\#(action)","worker":"\#(worker)"}"#)?["job"]?.stringValue))
        }
        // A submitter keeps adding jobs while another client pages.
        let stop = Atomic<Bool>(false)
        let socket = d.socketPath
        let feeder = Thread {
            guard let other = try? TestClient(path: socket) else { return }
            var k = 0
            while !stop.load(ordering: .relaxed) {
                _ = other.call(#"{"id":\#(k),"op":"submit","action":"noop","wait":false}"#)
                k += 1
            }
        }
        feeder.start()
        var listed: [String] = []
        var cursor: String?
        for _ in 0..<1000 {
            let line = cursor.map { #"{"id":"p","op":"jobs","limit":7,"cursor":"\#($0)"}"# } ?? #"{"id":"p","op":"jobs","limit":7}"#
            let page = try #require(c.call(line))
            let jobs = try #require(page["jobs"]?.arrayValue)
            #expect(jobs.count <= 7)
            listed += jobs.compactMap { $0["job"]?.stringValue }
            guard case .string(let next)? = page["next_cursor"], listed.count < 400 else { break }
            cursor = next
        }
        stop.store(true, ordering: .relaxed)
        while !feeder.isFinished { usleep(1000) }
        #expect(Set(listed).count == listed.count)  // no job twice
        #expect(Array(listed.prefix(60)) == before)  // the first 60, in order, none skipped
        // Filters.
        let w1echo = try #require(c.call(#"{"id":"f","op":"jobs","worker":"w1","action":"echo","state":"completed","limit":1000}"#)?["jobs"]?.arrayValue)
        #expect(w1echo.count == (0..<60).filter { $0 % 2 == 0 && $0 % 3 != 0 }.count)
        #expect(w1echo.allSatisfy { $0["worker"] == "w1" && $0["action"] == "echo" && $0["state"] == "completed" && $0["result"] == nil })
        let future = try #require(c.call(#"{"id":"g","op":"jobs","since":"2999-01-01T00:00:00Z"}"#))
        #expect(future["jobs"]?.arrayValue?.isEmpty == true && future["next_cursor"] == .null)
        #expect(c.call(#"{"id":"h","op":"jobs","cursor":"nonsense"}"#)?.errorCode == "bad_request")
        #expect(c.call(#"{"id":"i","op":"jobs","worker":"w9"}"#)?.errorCode == "unknown_worker")
    }

    @Test("durable jobs keep their times across a SIGKILL restart")
    func durableTimesSurviveARestart() throws {
        let directory = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let daemon = DurableReplayTests.DaemonProcess(directory: directory)
        try daemon.start()
        var c = try TestClient(path: daemon.socketPath)
        let done = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["5"],"durable":true}"#)?["job"]?.stringValue)
        let pending = try #require(c.call(#"{"id":2,"op":"submit","action":"noop","durable":true,"delay_ms":3600000,"wait":false}"#)?["job"]?.stringValue)
        let doneBefore = try #require(c.call(#"{"id":3,"op":"status","job":"\#(done)"}"#))
        let pendingBefore = try #require(c.call(#"{"id":4,"op":"status","job":"\#(pending)"}"#))
        #expect(doneBefore["state"] == "completed" && doneBefore["started_at"] != nil)
        // The finish is journaled by the commit of a later pass: a waited
        // durable job after it is acknowledged only once that commit is on disk.
        #expect(c.call(#"{"id":5,"op":"submit","action":"noop","durable":true}"#)?["state"] == "completed")
        daemon.kill()
        try daemon.start()
        defer { daemon.terminate() }
        c = try TestClient(path: daemon.socketPath)
        let doneAfter = try #require(c.call(#"{"id":6,"op":"status","job":"\#(done)"}"#))
        for field in ["state", "worker", "action", "submitted_at", "started_at", "finished_at", "queue_ms", "run_ms"] {
            #expect(doneAfter[field] != nil && doneAfter[field] == doneBefore[field], "\(field)")
        }
        let pendingAfter = try #require(c.call(#"{"id":7,"op":"status","job":"\#(pending)"}"#))
        #expect(pendingAfter["state"] == "delayed")
        #expect(pendingAfter["submitted_at"] == pendingBefore["submitted_at"])
        // wait on a durable job that ended before the restart answers from the journal.
        #expect(c.call(#"{"id":8,"op":"wait","job":"\#(done)"}"#)?["result"]?["slept_ms"] == .integer(5))
    }
}

/// The shipped production configuration, in this checkout.
let productionConfigPath: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path + "/Config/loopd.production.toml"
}()

/// Unix milliseconds of an RFC 3339 UTC time with milliseconds, as loopd writes them.
func parseRFC3339(_ s: String) -> Int64? {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return f.date(from: s).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
}

/// loopctl's exit status against a real daemon: a script tells a job's end
/// from it (the mapping is in `loopctl --help` and docs/PROTOCOL.md).
@Suite(.serialized) struct LoopctlExitStatusTests {
    @Test("exit statuses: completed 0, the child's own status, 128+signal, failed 1, timed out 124, cancelled 125, refused 5, wait timeout 6")
    func exitStatusesTellHowAJobEnded() throws {
        let binary = try #require(LoopctlBinary.url(), "loopctl binary not found next to the test bundle")
        let d = RunningDaemon { config in
            var exec = DaemonConfig.Exec(argv: ["/bin/sh", "-c", #"case "$1" in kill) kill -9 $$;; *) exit "$1";; esac"#, "sh"])
            exec.maxClientArgs = 1
            config.actions["shell"] = DaemonConfig.Action(allowUsers: [getuid()], exec: exec)
        }
        defer { d.stop() }
        // Options go before a submit's action: everything after it is the job's arguments.
        func loopctl(_ command: String, _ arguments: String...) throws -> Int32 {
            try LoopctlBinary.run(binary, [command, "--socket", d.socketPath] + arguments)
        }
        #expect(try loopctl("submit", "shell", "0") == 0)
        #expect(try loopctl("submit", "shell", "3") == 3)
        #expect(try loopctl("submit", "shell", "42") == 42)
        #expect(try loopctl("submit", "shell", "kill") == 128 + SIGKILL)
        #expect(try loopctl("submit", "fail") == 1)
        #expect(try loopctl("submit", "--timeout", "20", "sleep", "60000") == 124)
        #expect(try loopctl("submit", "no-such-action") == 5)
        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"noop","delay_ms":60000,"wait":false}"#)?["job"]?.stringValue)
        #expect(try loopctl("wait", "--timeout", "10", job) == 6)
        #expect(c.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#)?["cancelled"] == true)
        #expect(try loopctl("wait", job) == 125)
        #expect(try loopctl("cancel", job) == 5)  // already ended: nothing cancelled
        #expect(try loopctl("status", job) == 0)
    }
}
