import Foundation
import LoopPlatform
import LoopRuntime
@testable import LoopdProtocol
import Synchronization
import Testing
@testable import LoopdCore

// Scheduling like a queue: `priority` orders the jobs waiting on a worker
// (lower first, equal keeps arrival order, a key keeps its order), and
// `expires_in_ms` ends a job that has not started in time `expired`.

/// An action that starts and then waits, without blocking its worker's
/// loop, until the test releases it (on the worker's thread, through
/// `releaseBehind`): jobs handed over meanwhile gather in the lane.
final class HoldingAction: JobAction, @unchecked Sendable {
    private let contexts = Mutex<[ActionContext]>([])
    let started = DispatchSemaphore(value: 0)

    func start(_ context: ActionContext) {
        contexts.withLock { $0.append(context) }
        started.signal()
    }

    /// Completes every held job; worker thread.
    func release() {
        for c in contexts.withLock({ let all = $0; $0 = []; return all }) { c.complete(.success(.object([]))) }
    }

    /// Releases the held job once everything the daemon's main loop has
    /// queued so far (the hand-over of the jobs submitted before this
    /// call) has reached `worker`'s lane: a block on the main loop queues
    /// the release on the worker's loop behind those hand-overs.
    func releaseBehind(_ d: RunningDaemon, worker: String) {
        _ = d.daemon.onMainThread { [self] server in
            server.scheduler.queue(named: worker)!.worker.thread.perform(modes: [.common]) { self.release() }
        }
    }
}

@Suite(.serialized) struct PriorityTests {
    private static func daemon(_ log: OrderLog, _ hold: HoldingAction,
                               configure: @escaping (inout DaemonConfig) -> Void = { _ in }) -> RunningDaemon {
        RunningDaemon(configure: configure, register: {
            $0.register(action: RecordingAction(log: log), named: "record")
            $0.register(action: hold, named: "hold")
        })
    }

    @Test("priority: jobs from 4 connections submitted concurrently start lowest priority first, ties in arrival order")
    func priorityOrderUnderConcurrentSubmits() throws {
        let log = OrderLog(), hold = HoldingAction()
        let d = Self.daemon(log, hold)
        defer { d.stop() }
        let control = try d.client()
        #expect(control.call(#"{"id":0,"op":"submit","action":"hold","worker":"w1","wait":false}"#)?.ok == true)
        #expect(hold.started.wait(timeout: .now() + 30) == .success)
        let clients = 4, perClient = 40
        // Priorities from a small set, so ties are many; the table is fixed
        // per (client, i), so the test knows each job's priority.
        @Sendable func priority(_ k: Int, _ i: Int) -> UInt32 { UInt32((k * 7 + i * 13) % 5) * 1000 }
        DispatchQueue.concurrentPerform(iterations: clients) { k in
            guard let c = try? d.client() else { return }
            for i in 0..<perClient {
                c.send(#"{"id":\#(i),"op":"submit","action":"record","args":["\#(k)","\#(i)"],"worker":"w1","wait":false,"priority":\#(priority(k, i))}"#)
            }
            for _ in 0..<perClient { _ = c.readReply() }
        }
        hold.releaseBehind(d, worker: "w1")
        #expect(control.call(#"{"id":1,"op":"submit","action":"noop","worker":"w1","priority":4294967295}"#)?.ok == true)
        let entries = log.entries
        #expect(entries.count == clients * perClient)
        let priorities = entries.map { priority($0.0, $0.1) }
        #expect(priorities == priorities.sorted(), "jobs started out of priority order")
        for k in 0..<clients {
            for p in Set(priorities) {
                let mine = entries.filter { $0.0 == k && priority($0.0, $0.1) == p }.map(\.1)
                #expect(mine == mine.sorted(), "client \(k)'s jobs of priority \(p) overtook each other")
            }
        }
        #expect(log.overlapped == false)
    }

    @Test("priority: jobs of one priority, the default or another, start in arrival order")
    func equalPriorityIsFIFO() throws {
        let log = OrderLog(), hold = HoldingAction()
        let d = Self.daemon(log, hold)
        defer { d.stop() }
        let c = try d.client()
        for priority in [nil, 7 as UInt32?] {
            #expect(c.call(#"{"id":0,"op":"submit","action":"hold","worker":"w1","wait":false}"#)?.ok == true)
            #expect(hold.started.wait(timeout: .now() + 30) == .success)
            let field = priority.map { #","priority":\#($0)"# } ?? ""
            for i in 0..<100 {
                c.send(#"{"id":\#(i),"op":"submit","action":"record","args":["\#(priority ?? 0)","\#(i)"],"worker":"w1","wait":false\#(field)}"#)
            }
            for _ in 0..<100 { _ = c.readReply() }
            hold.releaseBehind(d, worker: "w1")
            #expect(c.call(#"{"id":"end","op":"submit","action":"noop","worker":"w1","priority":4294967295}"#)?.ok == true)
        }
        let entries = log.entries
        #expect(entries.filter { $0.0 == 0 }.map(\.1) == Array(0..<100))
        #expect(entries.filter { $0.0 == 7 }.map(\.1) == Array(0..<100))
    }

    @Test("priority: a keyed job never overtakes an earlier job of its key; it runs at max(its priority, the earlier one's)")
    func keyedOrderIsPreserved() throws {
        let log = OrderLog(), hold = HoldingAction()
        let d = Self.daemon(log, hold)
        defer { d.stop() }
        let c = try d.client()
        let key = "orders"
        let worker = ["w1", "w2"][Int(fnv1a(key) % 2)]
        #expect(c.call(#"{"id":0,"op":"submit","action":"hold","worker":"\#(worker)","wait":false}"#)?.ok == true)
        #expect(hold.started.wait(timeout: .now() + 30) == .success)
        // Keyed jobs asking for ever better priorities: 10, 9, …, 1.
        var ids: [String] = []
        for i in 0..<10 {
            let r = c.call(#"{"id":\#(i),"op":"submit","action":"record","args":["1","\#(i)"],"key":"\#(key)","wait":false,"priority":\#(10 - i)}"#)
            ids.append(try #require(r?["job"]?.stringValue))
        }
        // An unkeyed job of priority 5 on the same worker passes the keyed
        // ones, which all run at 10 (the first one's).
        #expect(c.call(#"{"id":"u","op":"submit","action":"record","args":["2","0"],"worker":"\#(worker)","wait":false,"priority":5}"#)?.ok == true)
        let last = try #require(c.call(#"{"id":"s","op":"status","job":"\#(ids[9])"}"#))
        #expect(last["priority"] == .integer(1))
        #expect(last["run_priority"] == .integer(10))
        hold.releaseBehind(d, worker: worker)
        #expect(c.call(#"{"id":"end","op":"submit","action":"noop","worker":"\#(worker)","priority":4294967295}"#)?.ok == true)
        let entries = log.entries
        #expect(entries.first.map { $0.0 } == 2, "the unkeyed priority-5 job should start first")
        #expect(entries.filter { $0.0 == 1 }.map(\.1) == Array(0..<10))
        // A request has the main loop record every end before it (the
        // keyed jobs' ends were lazy reports).
        #expect(c.call(#"{"id":"p","op":"ping"}"#)?.ok == true)
        #expect(d.daemon.onMainThread { $0.scheduler.keyOrder.count } == 0, "ended keyed jobs are forgotten")
    }

    @Test("priority: status and jobs show it; the default is 2^31")
    func statusShowsPriority() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let plain = try #require(c.call(#"{"id":1,"op":"submit","action":"noop"}"#))
        let urgent = try #require(c.call(#"{"id":2,"op":"submit","action":"noop","priority":0}"#))
        #expect(c.call(#"{"id":3,"op":"status","job":"\#(plain["job"]!.stringValue!)"}"#)?["priority"] == .integer(2_147_483_648))
        #expect(c.call(#"{"id":4,"op":"status","job":"\#(urgent["job"]!.stringValue!)"}"#)?["priority"] == .integer(0))
        let listed = try #require(c.call(#"{"id":5,"op":"jobs"}"#)?["jobs"]?.arrayValue)
        #expect(listed.map { $0["priority"] } == [.integer(2_147_483_648), .integer(0)])
    }
}

@Suite("the lane's ready queue by priority") struct JobReadyQueueTests {
    /// A job of `fixture` that runs at priority `p`.
    private func job(_ f: JobFixture, _ id: String, _ p: UInt32) -> Job {
        let j = f.job(id, SubmitRequest(action: "echo", priority: p))
        j.runPriority = p
        return j
    }

    @Test("one priority stays a FIFO; another one switches to the heap; drained, back to the FIFO")
    func fastPathAndHeap() {
        let f = JobFixture()
        defer { f.stop() }
        var q = JobReadyQueue()
        q.append(contentsOf: [job(f, "a", 5), job(f, "b", 5)])
        #expect(q.isOrderedByPriority == false)
        q.append(contentsOf: [job(f, "c", 1), job(f, "d", 5), job(f, "e", 1)])
        #expect(q.isOrderedByPriority)
        var order: [String] = []
        while let j = q.takeFirst(where: { _ in true }) { order.append(j.id) }
        #expect(order == ["c", "e", "a", "b", "d"])
        q.append(contentsOf: [job(f, "f", 9)])
        #expect(q.isOrderedByPriority == false)
        #expect(q.takeFirst(where: { _ in true })?.id == "f")
    }

    @Test("a job passed over for its mode stays; the next admitted one by priority is taken")
    func passesOverHeldJobs() {
        let f = JobFixture()
        defer { f.stop() }
        var q = JobReadyQueue()
        q.append(contentsOf: [job(f, "held", 0), job(f, "x", 3), job(f, "y", 2)])
        #expect(q.takeFirst(where: { $0.id != "held" })?.id == "y")
        #expect(q.takeFirst(where: { $0.id != "held" })?.id == "x")
        #expect(q.takeFirst(where: { $0.id != "held" }) == nil)
        #expect(q.takeFirst(where: { _ in true })?.id == "held")
        #expect(q.isEmpty)
    }
}

@Suite(.serialized) struct ExpiryTests {
    @Test("expiry: a queued job behind a running one ends expired; wait, stats and metrics say so")
    func queuedJobExpires() throws {
        let hold = HoldingAction()
        let d = RunningDaemon(register: { $0.register(action: hold, named: "hold") })
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":0,"op":"submit","action":"hold","worker":"w1","wait":false}"#)?.ok == true)
        #expect(hold.started.wait(timeout: .now() + 30) == .success)
        let reply = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["late"],"worker":"w1","expires_in_ms":50}"#))
        #expect(reply.errorCode == "expired")
        #expect(reply["state"] == "expired")
        let job = try #require(reply["job"]?.stringValue)
        #expect(c.call(#"{"id":2,"op":"wait","job":"\#(job)"}"#)?["state"] == "expired")
        #expect(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#)?["started_at"] == nil)
        #expect(c.call(#"{"id":4,"op":"stats"}"#)?["expired"] == .integer(1))
        let m = try Exposition(c.call(#"{"id":5,"op":"metrics"}"#))
        #expect(m["loopd_jobs_ended_total", ["action": "echo", "worker": "w1", "state": "expired"]] == 1)
        hold.releaseBehind(d, worker: "w1")
        #expect(c.call(#"{"id":6,"op":"submit","action":"echo","args":["after"],"worker":"w1"}"#)?["result"]?["output"] == "after")
        #expect(d.daemon.onMainThread { $0.scheduler.timing.expiries.count } == 0)
    }

    @Test("expiry: a held job (its worker in another mode) ends expired")
    func heldJobExpires() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        let reply = try #require(c.call(#"{"id":2,"op":"submit","action":"echo","worker":"w1","expires_in_ms":50}"#))
        #expect(reply.errorCode == "expired")
        #expect(c.call(#"{"id":3,"op":"mode","worker":"w1","mode":"default"}"#)?.ok == true)
        #expect(c.call(#"{"id":4,"op":"submit","action":"echo","args":["ok"],"worker":"w1"}"#)?["result"]?["output"] == "ok")
    }

    @Test("expiry: a delayed job whose expiry comes before its delay ends expired and never runs")
    func delayedJobExpires() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let ack = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","delay_ms":600000,"expires_in_ms":50,"wait":false}"#))
        #expect(ack["state"] == "delayed")
        let job = try #require(ack["job"]?.stringValue)
        #expect(c.call(#"{"id":2,"op":"wait","job":"\#(job)"}"#)?.errorCode == "expired")
        #expect(c.call(#"{"id":3,"op":"stats"}"#)?["queued"] == .integer(0))
        // It left the delay heap as it ended: nothing is released an hour on.
        #expect(d.daemon.onMainThread { $0.scheduler.timing.delays.count } == 0)
    }

    @Test("expiry: a job that starts in time runs; its expiry leaves the heap")
    func startedJobDoesNotExpire() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["hi"],"expires_in_ms":600000}"#))
        #expect(r["result"]?["output"] == "hi")
        let status = try #require(c.call(#"{"id":2,"op":"status","job":"\#(r["job"]!.stringValue!)"}"#))
        #expect(status["state"] == "completed")
        #expect(status["expires_at"]?.stringValue != nil)
        #expect(d.daemon.onMainThread { $0.scheduler.timing.expiries.count } == 0)
    }

    @Test("expiry: limits.default_expires_in_ms applies to jobs that ask for none")
    func configuredDefaultExpiry() throws {
        let d = RunningDaemon(configure: { $0.limits.defaultExpiresInMs = 50 })
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        #expect(c.call(#"{"id":2,"op":"submit","action":"echo","worker":"w1"}"#)?.errorCode == "expired")
    }

    @Test("expiry: a durable job keeps its deadline across a restart; one past it ends expired at replay")
    func durableExpiryAcrossRestart() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let state = dir + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let now = unixMilliseconds()
        do {
            let journal = try JobJournal(directory: state, fsync: false, retentionSeconds: 86_400)
            // Submitted a minute ago with a 1 s expiry: it expired while loopd was down.
            journal.appendSubmitted(DurableJob(id: "gone", action: "echo", args: ["x"], placement: "worker:w1",
                                               submittedAt: now - 60_000, clientUID: getuid(), clientGID: getgid(),
                                               priority: 3, expiresInMs: 1_000))
            // Still inside its expiry: it runs, with its priority.
            journal.appendSubmitted(DurableJob(id: "alive", action: "echo", args: ["y"], placement: "worker:w1",
                                               submittedAt: now, clientUID: getuid(), clientGID: getgid(),
                                               priority: 3, expiresInMs: 600_000))
            try journal.commit()
        }
        let d = RunningDaemon(configure: { $0.server.stateDirectory = state })
        defer { d.stop() }
        let c = try d.client()
        let gone = try #require(c.call(#"{"id":1,"op":"wait","job":"gone"}"#))
        #expect(gone["state"] == "expired")
        #expect(gone.errorCode == "expired")
        let alive = try #require(c.call(#"{"id":2,"op":"wait","job":"alive"}"#))
        #expect(alive["state"] == "completed")
        let status = try #require(c.call(#"{"id":3,"op":"status","job":"alive"}"#))
        #expect(status["priority"] == .integer(3))
        #expect(status["expires_at"] == .string(Timestamp.format(unixMilliseconds: now + 600_000)))
    }

    @Test("expiry: a durable job's priority and expiry are journaled")
    func journalRecordRoundTrip() throws {
        let job = DurableJob(id: "j", action: "echo", args: [], placement: "any", submittedAt: 5, clientUID: 1,
                             clientGID: 2, clientGroups: [3], priority: 9, expiresInMs: 1234)
        var bytes: [UInt8] = []
        try JournalRecord.submitted(job).encode(into: &bytes)
        let decoded = JournalRecord.decode(type: bytes[8], payload: bytes[9...])
        #expect(decoded == .submitted(job))
        var plain = job
        plain.priority = DurableJob.defaultPriority
        plain.expiresInMs = nil
        var plainBytes: [UInt8] = []
        try JournalRecord.submitted(plain).encode(into: &plainBytes)
        #expect(plainBytes.count == bytes.count - 4 - 1 - 8, "a job with neither writes the record as before")
        #expect(JournalRecord.decode(type: plainBytes[8], payload: plainBytes[9...]) == .submitted(plain))
    }

    @Test("durable jobs: the scheduling tails nest, so retries and a unique key read back with or without a priority",
          arguments: [DurableJob.defaultPriority, 7])
    func journalRecordWithRetriesRoundTrip(priority: UInt32) throws {
        var job = DurableJob(id: "j", action: "echo", args: ["a"], placement: "key:k", submittedAt: 5, clientUID: 1,
                             priority: priority)
        job.retries = 3
        job.retryBackoffMs = 250
        job.uniqueKey = "order-42"
        job.attemptsDone = 1
        var bytes: [UInt8] = []
        try JournalRecord.submitted(job).encode(into: &bytes)
        #expect(JournalRecord.decode(type: bytes[8], payload: bytes[9...]) == .submitted(job))
    }
}

@Suite("priority and expiry: hostile input") struct SchedulingInputTests {
    @Test("priority out of range, negative, fractional or not a number; expires_in_ms zero or too long: bad_request naming the field",
          arguments: [
              (#""priority":-1"#, "\"priority\" must be in 0...4294967295, not -1"),
              (#""priority":4294967296"#, "\"priority\" must be in 0...4294967295, not 4294967296"),
              (#""priority":1.5"#, "\"priority\" must be an integer"),
              (#""priority":"high""#, "\"priority\" must be an integer, not string"),
              (#""expires_in_ms":0"#, "\"expires_in_ms\" must be in 1...604800000, not 0"),
              (#""expires_in_ms":604800001"#, "\"expires_in_ms\" must be in 1...604800000"),
              (#""expires_in_ms":"soon""#, "\"expires_in_ms\" must be an integer"),
          ])
    func refusesBadValues(field: String, message: String) throws {
        let line = #"{"id":1,"op":"submit","action":"echo",\#(field)}"#
        guard case .failure(let failure) = RequestDecoder.decode(Array(line.utf8)) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(failure.error.code == .badRequest)
        #expect(failure.error.message.hasPrefix(message), "\(failure.error.message)")
        #expect(failure.id == .integer(1))
    }

    @Test("the one-pass decoder reads priority and expires_in_ms as the generic one does")
    func onePassAgrees() throws {
        for line in [#"{"id":1,"op":"submit","action":"echo","priority":0,"expires_in_ms":1}"#,
                     #"{"id":1,"op":"submit","action":"echo","priority":4294967295,"expires_in_ms":604800000}"#] {
            let fast = Array(line.utf8).withUnsafeBufferPointer { RequestDecoder.decodeOnePass($0) }
            guard case .success(let slow) = RequestDecoder.decodeGeneric(Array(line.utf8)) else {
                Issue.record("refused \(line)")
                continue
            }
            #expect(fast == slow)
        }
        let line = #"{"id":1,"op":"submit","action":"echo","priority":4294967296}"#
        #expect(Array(line.utf8).withUnsafeBufferPointer { RequestDecoder.decodeOnePass($0) } == nil)
    }

    @Test("an expiry beyond limits.max_expires_in_ms is refused, naming the limit")
    func expiryOverTheConfiguredLimit() throws {
        let d = RunningDaemon(configure: { $0.limits.maxExpiresInMs = 1_000 })
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","expires_in_ms":5000}"#))
        #expect(r.errorCode == "bad_request")
        #expect(r["error"]?["message"]?.stringValue?.contains("limits.max_expires_in_ms") == true)
        #expect(c.call(#"{"id":2,"op":"submit","action":"echo","args":["ok"],"expires_in_ms":1000}"#)?["result"]?["output"] == "ok")
    }

    @Test("config: max_expires_in_ms and default_expires_in_ms are checked, the error names the key",
          arguments: [
              ("max_expires_in_ms = 0", "max_expires_in_ms"),
              ("max_expires_in_ms = 604800001", "max_expires_in_ms"),
              ("default_expires_in_ms = -1", "default_expires_in_ms"),
              ("max_expires_in_ms = 1000\ndefault_expires_in_ms = 2000", "default_expires_in_ms"),
          ])
    func configLimits(settings: String, key: String) throws {
        let text = "[limits]\n\(settings)\n[[workers]]\nname = \"w1\"\n"
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(text, origin: "test") }
        do {
            _ = try ConfigLoader.parse(text, origin: "test")
        } catch {
            #expect("\(error)".contains(key), "\(error)")
        }
    }

    @Test("config: the limits' defaults, and values read")
    func configDefaults() throws {
        let plain = try ConfigLoader.parse("[[workers]]\nname = \"w1\"\n", origin: "test")
        #expect(plain.limits.maxExpiresInMs == 86_400_000)
        #expect(plain.limits.defaultExpiresInMs == 0)
        let set = try ConfigLoader.parse("[limits]\nmax_expires_in_ms = 5000\ndefault_expires_in_ms = 100\n[[workers]]\nname = \"w1\"\n", origin: "test")
        #expect(set.limits.maxExpiresInMs == 5000)
        #expect(set.limits.defaultExpiresInMs == 100)
    }
}
