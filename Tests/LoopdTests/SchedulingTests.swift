import Foundation
import LoopRuntime
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Pipelining, serial lanes, placement, modes, delay and cancel.
@Suite(.serialized) struct SchedulingTests {
    @Test func pipelinedRequestsGetOutOfOrderRepliesTaggedWithTheirIds() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client(), control = try d.client()
        // w1 runs another mode: the first request's job is held, and ends
        // only when the test switches w1 back, after the other two replies.
        #expect(control.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        c.send(#"{"id":"held","op":"submit","action":"echo","args":["x"],"worker":"w1"}"#)
        c.send(#"{"id":"fast","op":"submit","action":"echo","args":["y"],"worker":"w2"}"#)
        c.send(#"{"id":"ping","op":"ping"}"#)
        var ids: Set<String> = []
        for _ in 0..<2 { ids.insert(c.readReply()?["id"]?.stringValue ?? "?") }
        #expect(ids == ["fast", "ping"])
        #expect(control.waitForHeld("w1", 1), "the first request's job is not held by w1's mode")
        #expect(control.call(#"{"id":2,"op":"mode","worker":"w1","mode":"default"}"#)?.ok == true)
        let last = try #require(c.readReply())
        #expect(last["id"] == "held")  // finished last, answered last
        #expect(last["result"]?["output"] == "x")
    }

    @Test func jobsOnOneWorkerRunInArrivalOrderUnderManyClients() throws {
        let log = OrderLog()
        let d = RunningDaemon(register: { $0.register(action: RecordingAction(log: log), named: "record") })
        defer { d.stop() }
        let clients = 8, perClient = 50
        DispatchQueue.concurrentPerform(iterations: clients) { k in
            guard let c = try? d.client() else { return }
            for i in 0..<perClient {
                c.send(#"{"id":\#(i),"op":"submit","action":"record","args":["\#(k)","\#(i)"],"worker":"w1","wait":false}"#)
            }
            for _ in 0..<perClient { _ = c.readReply() }
        }
        let c = try d.client()
        #expect(c.call(#"{"id":"end","op":"submit","action":"noop","worker":"w1"}"#)?.ok == true)
        let entries = log.entries
        #expect(entries.count == clients * perClient)
        for k in 0..<clients {
            let mine = entries.filter { $0.0 == k }.map(\.1)
            #expect(mine == Array(0..<perClient))
        }
        #expect(log.overlapped == false)
        #expect(Set(log.threads).count == 1)
    }

    @Test func sameKeyAlwaysLandsOnTheSameWorker() throws {
        let d = RunningDaemon { $0.workers = [.init(name: "a"), .init(name: "b"), .init(name: "c")] }
        defer { d.stop() }
        let c = try d.client()
        for key in ["alpha", "beta", "gamma", "delta"] {
            var seen = Set<String>()
            for i in 0..<10 {
                let r = c.call(#"{"id":\#(i),"op":"submit","action":"noop","key":"\#(key)"}"#)
                seen.insert(r?["worker"]?.stringValue ?? "?")
            }
            #expect(seen.count == 1)
            #expect(seen.first == ["a", "b", "c"][Int(fnv1a(key) % 3)])
        }
    }

    @Test func jobsForAnotherModeAreHeldAndRunWhenTheWorkerSwitches() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        // A default-mode job is held; a maintenance job and a common job run.
        let held = try #require(c.call(#"{"id":2,"op":"submit","action":"echo","args":["held"],"worker":"w1","wait":false}"#))
        let heldID = try #require(held["job"]?.stringValue)
        #expect(held["state"] == "held")
        #expect(c.call(#"{"id":3,"op":"submit","action":"echo","args":["m"],"worker":"w1","mode":"maintenance"}"#)?["result"]?["output"] == "m")
        #expect(c.call(#"{"id":4,"op":"submit","action":"echo","args":["c"],"worker":"w1","mode":"common"}"#)?["result"]?["output"] == "c")
        #expect(c.call(#"{"id":5,"op":"status","job":"\#(heldID)"}"#)?["state"] == "held")
        let workers = try #require(c.call(#"{"id":6,"op":"workers"}"#))
        #expect(workers["workers"]?.arrayValue?.first?["held"] == .integer(1))
        #expect(c.call(#"{"id":7,"op":"mode","worker":"w1","mode":"default"}"#)?.ok == true)
        var state = ""
        for _ in 0..<2000 {
            state = c.call(#"{"id":8,"op":"status","job":"\#(heldID)"}"#)?["state"]?.stringValue ?? ""
            if state == "completed" { break }
            usleep(5000)
        }
        #expect(state == "completed")
    }

    /// A worker's lane reads its loop's mode once per run, not per job: a
    /// run that ends (here a nested run of the worker's loop, in a common
    /// mode of its own, while the lane is idle) must leave it reading the
    /// outer run's mode again, or a default-mode job after it would wait
    /// for a mode that has gone.
    @Test func aJobAfterANestedRunOfItsWorkersLoopStillRuns() throws {
        let nestedRuns = NestedRunCount()
        let d = RunningDaemon(register: { $0.register(action: NestedRunAfterAction(runs: nestedRuns), named: "nested") })
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"submit","action":"nested","worker":"w1"}"#)?["state"] == "completed")
        #expect(waitUntil(60) { nestedRuns.stopped == 1 }, "the nested run never ended stopped")
        let next = try #require(c.call(#"{"id":2,"op":"submit","action":"noop","worker":"w1","wait":false}"#))
        let job = try #require(next["job"]?.stringValue)
        #expect(c.waitForState(job, "completed", seconds: 60) == "completed")
    }

    @Test func delayedJobCanBeCancelledAndNeverRuns() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","delay_ms":60000,"wait":false}"#))
        #expect(r["state"] == "delayed")
        let job = try #require(r["job"]?.stringValue)
        let cancel = try #require(c.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#))
        #expect(cancel["cancelled"] == true && cancel["started"] == false)  // it never ran
        #expect(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#)?["state"] == "cancelled")
        // A finished job cannot be cancelled.
        let done = try #require(c.call(#"{"id":4,"op":"submit","action":"noop"}"#)?["job"]?.stringValue)
        #expect(c.call(#"{"id":5,"op":"cancel","job":"\#(done)"}"#)?["cancelled"] == false)
        #expect(c.call(#"{"id":6,"op":"stats"}"#)?["cancelled"] == .integer(1))
    }

    @Test func delayedJobRunsAfterItsDelay() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["late"],"delay_ms":30}"#))
        #expect(r["result"]?["output"] == "late")
    }

    @Test func waitingJobIsCancelledWithItsWaiterAnswered() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let a = try d.client(), b = try d.client()
        // w1 runs another mode: the victim stays queued until it is cancelled.
        #expect(b.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        // The victim's own reply comes only when it ends: its id is read from
        // the held jobs the daemon lists, and the reply must name the same id.
        a.send(#"{"id":"victim","op":"submit","action":"echo","worker":"w1"}"#)
        #expect(b.waitForHeld("w1", 1), "the victim was never accepted and held")
        let held = try #require(b.call(#"{"id":2,"op":"jobs","state":"held","worker":"w1"}"#)?["jobs"]?.arrayValue)
        #expect(held.count == 1 && held.first?["action"] == "echo", "\(held)")
        let job = try #require(held.first?["job"]?.stringValue)
        let cancel = try #require(b.call(#"{"id":5,"op":"cancel","job":"\#(job)"}"#))
        #expect(cancel["cancelled"] == true)
        let reply = try #require(a.readReply())
        #expect(reply["id"] == "victim")
        #expect(reply["job"]?.stringValue == job)
        #expect(reply.errorCode == "cancelled")
    }
}

/// What the recording action saw: (client, sequence) in run order, whether
/// two jobs ever overlapped, and which threads ran them.
final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var _entries: [(Int, Int)] = []
    private var _threads: [String] = []
    private var running = false
    private var _overlapped = false

    func begin(_ client: Int, _ seq: Int) {
        lock.lock(); defer { lock.unlock() }
        if running { _overlapped = true }
        running = true
        _entries.append((client, seq))
        _threads.append("\(pthread_self())")
    }

    func end() {
        lock.lock(); defer { lock.unlock() }
        running = false
    }

    var entries: [(Int, Int)] { lock.lock(); defer { lock.unlock() }; return _entries }
    var threads: [String] { lock.lock(); defer { lock.unlock() }; return _threads }
    var overlapped: Bool { lock.lock(); defer { lock.unlock() }; return _overlapped }
}

/// An embedder's action that completes at once and then, its lane idle,
/// runs its worker's loop in a mode of its own (made common, so the
/// worker's own observers see that run start and end) until a timer stops
/// that run.
struct NestedRunAfterAction: JobAction {
    let runs: NestedRunCount

    func start(_ context: ActionContext) {
        let loop = context.loop
        context.complete(.success(.object([])))
        let later = LoopTimer(after: .milliseconds(1)) { _ in
            let mode = Loop.Mode("nested")
            loop.addCommonMode(mode)
            loop.add(LoopTimer(after: .milliseconds(1)) { _ in loop.stop() }, forMode: mode)
            if loop.run(mode: mode, timeout: .seconds(60)) == .stopped { runs.countStopped() }
        }
        loop.add(later, forMode: .common)
    }
}

/// How many of `NestedRunAfterAction`'s runs ended stopped.
final class NestedRunCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var stopped: Int { lock.lock(); defer { lock.unlock() }; return count }
    func countStopped() { lock.lock(); count += 1; lock.unlock() }
}

/// An embedder's action (the Swift API for actions) that
/// records its arguments and finishes on a short timer, so jobs would
/// overlap if the lane were not serial.
struct RecordingAction: JobAction {
    let log: OrderLog

    func start(_ context: ActionContext) {
        log.begin(Int(context.args[0]) ?? -1, Int(context.args[1]) ?? -1)
        let t = LoopTimer(after: .microseconds(200)) { _ in
            log.end()
            context.complete(.success(.object([])))
        }
        context.loop.add(t, forMode: .common)
    }
}
