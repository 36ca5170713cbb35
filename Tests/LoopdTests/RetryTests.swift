import Dispatch
import Foundation
import Glibc
import LoopPlatform
import LoopRuntime
import LoopdProtocol
import Testing
@testable import LoopdCore

/// SplitMix64: a seeded generator, so a jitter sequence repeats exactly.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs `body` with the scheduler on the daemon's main loop and waits for it.
func onMainLoop(_ d: RunningDaemon, _ body: @escaping @Sendable (JobScheduler) -> Void) throws {
    let loop = try #require(d.daemon.loop)
    let scheduler = try #require(d.daemon.server).scheduler
    let done = DispatchSemaphore(value: 0)
    loop.perform(inModes: [.common]) {
        body(scheduler)
        done.signal()
    }
    loop.wakeUp()
    #expect(done.wait(timeout: .now() + 20) == .success)
}

/// The jitter a test installs: records each ceiling and answers a fixed
/// fraction of it (0: retry at once; 1: wait the whole ceiling).
final class RecordingJitter: Sendable {
    let ceilings = Locked<[Int64]>([])
    let fraction: Int64
    init(fraction: Int64 = 0) { self.fraction = fraction }
    func install(on d: RunningDaemon) throws {
        try onMainLoop(d) { [self] s in
            s.timing.jitter = { ceiling in
                self.ceilings.withLock { $0.append(ceiling) }
                return ceiling * self.fraction
            }
        }
    }
}

/// An action that fails its first `failures` runs of each job, then completes.
final class FlakyAction: JobAction, Sendable {
    let failures: Int
    let runs = Locked<[String: Int]>([:])
    init(failures: Int) { self.failures = failures }
    func start(_ context: ActionContext) {
        let n = runs.withLock { r -> Int in
            r[context.jobID, default: 0] += 1
            return r[context.jobID]!
        }
        if n <= failures {
            context.complete(.failure(ProtocolError(.jobFailed, "flaky run \(n) failed"), result: .object([])))
        } else {
            context.complete(.success(.object([("runs", .integer(Int64(n)))])))
        }
    }
}

/// Retries with backoff (submit's `retries` and `retry_backoff_ms`):
/// exponential ceilings, full jitter, attempts and their errors.
@Suite struct RetryBackoffTests {
    @Test("retries: the backoff's ceiling doubles from the base per attempt, capped, and saturates")
    func ceilingsDoubleAndCap() {
        let ceilings = (1...6).map { RetryBackoff.ceiling(afterAttempt: $0, baseMs: 100, capMs: 1000) }
        #expect(ceilings == [100, 200, 400, 800, 1000, 1000])
        #expect(RetryBackoff.ceiling(afterAttempt: 200, baseMs: 86_400_000, capMs: 300_000) == 300_000)
        #expect(RetryBackoff.ceiling(afterAttempt: 63, baseMs: 1, capMs: .max) == .max)
        #expect(RetryBackoff.ceiling(afterAttempt: 3, baseMs: 0, capMs: 1000) == 0)
    }

    @Test("retries: full jitter from a seeded generator stays in 0...ceiling and repeats for the same seed")
    func seededJitterIsBoundedAndRepeatable() {
        func delays(seed: UInt64) -> [Int64] {
            var rng = SeededGenerator(state: seed)
            return (1...40).map { attempt in
                RetryBackoff.delay(afterAttempt: attempt, baseMs: 50, capMs: 10_000) { Int64.random(in: 0...$0, using: &rng) }
            }
        }
        let first = delays(seed: 42)
        #expect(first == delays(seed: 42))
        #expect(first != delays(seed: 43))
        for (i, delay) in first.enumerated() {
            #expect((0...RetryBackoff.ceiling(afterAttempt: i + 1, baseMs: 50, capMs: 10_000)).contains(delay))
        }
        // A jitter that strays is clamped into the bounds.
        #expect(RetryBackoff.delay(afterAttempt: 2, baseMs: 10, capMs: 100) { _ in 1_000_000 } == 20)
        #expect(RetryBackoff.delay(afterAttempt: 2, baseMs: 10, capMs: 100) { _ in -5 } == 0)
    }

    @Test("retries: a retry tail and gid-less record round-trip through the journal format")
    func journalRecordsKeepAttempts() throws {
        var submitted = DurableJob(id: "j-1", action: "fail", args: ["x"], placement: "any", submittedAt: 5, clientUID: 1000)
        submitted.retries = 3
        submitted.retryBackoffMs = 250
        submitted.uniqueKey = "order-7"
        submitted.attemptsDone = 2
        submitted.attemptErrors = [AttemptRecord(attempt: 1, code: "job_failed", message: "a", endedAt: 10),
                                   AttemptRecord(attempt: 2, code: "timeout", message: "b", endedAt: 20)]
        let finished = FinishedJob(id: "j-1", state: "failed", resultJSON: "{}", finishedAt: 30, clientUID: 1000,
                                   details: .init(submittedAt: 5, startedAt: 25, worker: "w1", action: "fail",
                                                  errorCode: "job_failed", errorMessage: "c", attempt: 3,
                                                  attemptErrors: submitted.attemptErrors, uniqueKey: "order-7"))
        for record in [JournalRecord.submitted(submitted), .finished(finished)] {
            var bytes: [UInt8] = []
            try record.encode(into: &bytes)
            #expect(JournalRecord.decode(type: bytes[8], payload: bytes[9...]) == record)
        }
        // A job without retries or a key is written as 0.1.0 wrote it.
        let plain = DurableJob(id: "j-2", action: "echo", args: [], placement: "any", submittedAt: 5, clientUID: 0, clientGID: 0)
        var bytes: [UInt8] = []
        try JournalRecord.submitted(plain).encode(into: &bytes)
        var old = plain
        old.retries = 0
        #expect(JournalRecord.decode(type: bytes[8], payload: bytes[9...]) == .submitted(old))
        #expect(!plain.hasRetryTail)
    }
}

@Suite(.serialized) struct RetryTests {
    @Test("retries: a failing job runs retries + 1 times, its waited reply comes once at the end with every attempt's error")
    func failingJobUsesEveryAttempt() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let jitter = RecordingJitter()
        try jitter.install(on: d)
        let c = try d.client()
        let reply = try #require(c.call(#"{"id":1,"op":"submit","action":"fail","args":["boom"],"retries":3,"retry_backoff_ms":10}"#))
        #expect(reply.ok == false)
        #expect(reply["error"]?["code"] == "job_failed")
        #expect(reply["state"] == "failed")
        #expect(reply["attempt"] == .integer(4))
        // Only one reply: the next line answers the next request.
        #expect(c.call(#"{"id":2,"op":"ping"}"#)?["id"] == .integer(2))
        #expect(jitter.ceilings.withLock { $0 } == [10, 20, 40])
        let job = try #require(reply["job"]?.stringValue)
        let status = try #require(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#))
        #expect(status["attempt"] == .integer(4))
        #expect(status["retries"] == .integer(3))
        #expect(status["last_error"]?["code"] == "job_failed")
        let attempts = try #require(status["attempts"]?.arrayValue)
        #expect(attempts.map { $0["attempt"] } == [.integer(1), .integer(2), .integer(3), .integer(4)])
        let stats = try #require(c.call(#"{"id":4,"op":"stats"}"#))
        #expect(stats["retried"] == .integer(3))
        #expect(stats["failed"] == .integer(1))
    }

    @Test("retries: a job that fails, then succeeds, completes on its second attempt")
    func flakyJobCompletesOnALaterAttempt() throws {
        let flaky = FlakyAction(failures: 1)
        let d = RunningDaemon(register: { $0.register(action: flaky, named: "flaky") })
        defer { d.stop() }
        try RecordingJitter().install(on: d)
        let c = try d.client()
        let reply = try #require(c.call(#"{"id":1,"op":"submit","action":"flaky","retries":5,"retry_backoff_ms":1}"#))
        #expect(reply.ok == true)
        #expect(reply["state"] == "completed")
        #expect(reply["attempt"] == .integer(2))
        #expect(reply["result"]?["runs"] == .integer(2))
        let status = try #require(c.call(#"{"id":2,"op":"status","job":"\#(reply["job"]?.stringValue ?? "")"}"#))
        #expect(status["last_error"]?["message"] == "flaky run 1 failed")
        #expect(status["error"] == nil)
    }

    @Test("retries: the last attempt's cause is the end: a timeout ends timed_out; a fail without retries has attempt 1 and no retry fields")
    func lastAttemptDecidesTheEnd() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        try RecordingJitter().install(on: d)
        let c = try d.client()
        let reply = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["5000"],"timeout_ms":10,"retries":1,"retry_backoff_ms":1}"#))
        #expect(reply["error"]?["code"] == "timeout")
        #expect(reply["state"] == "timed_out")
        #expect(reply["attempt"] == .integer(2))
        let plain = try #require(c.call(#"{"id":2,"op":"submit","action":"fail"}"#))
        #expect(plain["attempt"] == nil)
        let status = try #require(c.call(#"{"id":3,"op":"status","job":"\#(plain["job"]?.stringValue ?? "")"}"#))
        #expect(status["attempt"] == .integer(1))
        #expect(status["last_error"] == nil)
    }

    @Test("retries: between attempts the job is delayed; a cancel then ends it cancelled and answers its waiter")
    func cancelDuringBackoff() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let jitter = RecordingJitter(fraction: 1)
        try jitter.install(on: d)
        let c = try d.client()
        let ack = try #require(c.call(#"{"id":1,"op":"submit","action":"fail","wait":false,"retries":2,"retry_backoff_ms":600000}"#))
        let job = try #require(ack["job"]?.stringValue)
        let waiter = try d.client()
        waiter.send(#"{"id":"w","op":"wait","job":"\#(job)"}"#)
        #expect(waitUntil { c.call(#"{"id":2,"op":"status","job":"\#(job)"}"#)?["attempt"] == .integer(2) })
        let status = try #require(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#))
        #expect(status["state"] == "delayed")
        #expect(status["last_error"]?["code"] == "job_failed")
        // The cap (limits.max_retry_backoff_ms, 300000 by default) bounds the wait.
        #expect(jitter.ceilings.withLock { $0 } == [300_000])
        let cancel = try #require(c.call(#"{"id":4,"op":"cancel","job":"\#(job)"}"#))
        #expect(cancel["cancelled"] == true)
        let waited = try #require(waiter.readReply())
        #expect(waited["error"]?["code"] == "cancelled")
        #expect(waited["attempt"] == .integer(2))
    }

    @Test("retries, unique keys: hostile values get bad_request naming the field or the limit")
    func hostileValuesAreRefused() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let long = String(repeating: "k", count: 300)
        let huge = String(repeating: "k", count: 5000)
        let cases: [(String, String)] = [
            (#""retries":11"#, "limits.max_retries"),
            (#""retries":-1"#, "\"retries\" must be in 0...1000"),
            (#""retries":1001"#, "\"retries\" must be in 0...1000"),
            (#""retries":"3""#, "\"retries\" must be an integer"),
            (#""retries":1.5"#, "\"retries\" must be an integer"),
            (#""retry_backoff_ms":-5"#, "\"retry_backoff_ms\" must be in"),
            (#""retry_backoff_ms":true"#, "\"retry_backoff_ms\" must be an integer"),
            (#""unique_key":"\#(long)""#, "limits.max_unique_key_bytes"),
            (#""unique_key":"\#(huge)""#, "\"unique_key\" must be 1 to 4096 bytes"),
            (##""unique_key":"""##, "\"unique_key\" must be 1 to 4096 bytes"),
            (#""unique_key":"a\u0000b""#, "\"unique_key\" must be 1 to 4096 bytes"),
            (#""unique_key":5"#, "\"unique_key\" must be a string"),
            (#""unique_key":["a"]"#, "\"unique_key\" must be a string"),
        ]
        for (n, (field, message)) in cases.enumerated() {
            let reply = try #require(c.call(#"{"id":\#(n),"op":"submit","action":"noop",\#(field)}"#))
            #expect(reply["error"]?["code"] == "bad_request", "\(field)")
            #expect(reply["error"]?["message"]?.stringValue?.contains(message) == true, "\(field): \(reply)")
        }
        let jobs = try #require(c.call(#"{"id":"j","op":"jobs"}"#)?["jobs"]?.arrayValue)
        #expect(jobs.isEmpty)
    }
}

/// Unique jobs (submit's `unique_key`).
@Suite(.serialized) struct UniqueKeyTests {
    @Test("unique keys: the same key from eight connections at once makes exactly one job")
    func racingDuplicatesMakeOneJob() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let start = DispatchSemaphore(value: 0)
        let replies = Locked<[JSON]>([])
        let group = DispatchGroup()
        let path = d.socketPath
        for n in 0..<8 {
            DispatchQueue.global().async(group: group) {
                guard let c = try? TestClient(path: path) else { return }
                start.wait()
                for k in 0..<5 {
                    if let r = c.call(#"{"id":\#(n * 10 + k),"op":"submit","action":"sleep","args":["50"],"wait":false,"unique_key":"race-1"}"#) {
                        replies.withLock { $0.append(r) }
                    }
                }
            }
        }
        for _ in 0..<8 { start.signal() }
        #expect(group.wait(timeout: .now() + 30) == .success)
        let all = replies.withLock { $0 }
        #expect(all.count == 40)
        #expect(Set(all.compactMap { $0["job"]?.stringValue }).count == 1)
        #expect(all.filter { $0["duplicate"] == true }.count == 39)
        let c = try d.client()
        let jobs = try #require(c.call(#"{"id":"j","op":"jobs","action":"sleep"}"#)?["jobs"]?.arrayValue)
        #expect(jobs.count == 1)
        #expect(jobs.first?["unique_key"] == "race-1")
    }

    @Test("unique keys: a waited duplicate gets the first job's result; a different key or another job's end makes new jobs")
    func waitedDuplicateGetsTheResult() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let first = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["once"],"wait":false,"unique_key":"k1"}"#))
        let job = try #require(first["job"]?.stringValue)
        #expect(first["duplicate"] == nil)
        let again = try #require(c.call(#"{"id":2,"op":"submit","action":"echo","args":["twice"],"unique_key":"k1"}"#))
        #expect(again["job"] == .string(job))
        #expect(again["state"] == "completed")
        #expect(again["duplicate"] == true)
        #expect(again["result"]?["output"] == "once")
        let other = try #require(c.call(#"{"id":3,"op":"submit","action":"echo","args":["x"],"unique_key":"k2"}"#))
        #expect(other["job"] != .string(job))
        #expect(other["duplicate"] == nil)
        // A waited duplicate of a job still running is answered when it ends.
        let slow = try #require(c.call(#"{"id":4,"op":"submit","action":"sleep","args":["100"],"wait":false,"unique_key":"k3"}"#))
        let waited = try #require(c.call(#"{"id":5,"op":"submit","action":"sleep","args":["100"],"unique_key":"k3"}"#))
        #expect(waited["job"] == slow["job"])
        #expect(waited["state"] == "completed")
        #expect(waited["duplicate"] == true)
    }

    @Test("unique keys: scoped per uid — another user's submit with the same key makes its own job",
          .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func keysAreScopedPerUID() throws {
        let d = RunningDaemon { $0.server.socketMode = 0o666 }
        defer { d.stop() }
        chmod(d.directory, 0o755)
        let c = try d.client()
        let mine = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["root"],"unique_key":"shared"}"#))
        let script = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
        f = s.makefile('rwb')
        f.write(sys.argv[2].encode() + b'\\n'); f.flush()
        print(f.readline().decode().strip())
        """
        let out = try runAsUser(65534, URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, d.socketPath,
            #"{"id":2,"op":"submit","action":"echo","args":["nobody"],"unique_key":"shared"}"#])
        let theirs = try #require(try? JSONParser.parse(Array(out.stdout.utf8.filter { $0 != 0x0A })), "\(out)")
        #expect(theirs["job"] != mine["job"], "\(out)")
        #expect(theirs["duplicate"] == nil)
        #expect(theirs["result"]?["output"] == "nobody")
        // Root's key still names root's job.
        let again = try #require(c.call(#"{"id":3,"op":"submit","action":"echo","args":["root"],"unique_key":"shared"}"#))
        #expect(again["job"] == mine["job"])
        #expect(again["duplicate"] == true)
    }
}
