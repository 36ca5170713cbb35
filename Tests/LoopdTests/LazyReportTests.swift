import Dispatch
import Foundation
import Logging
import LoopdProtocol
import LoopRuntime
import Testing
@testable import LoopdCore

/// Lazy end reports: an end that asks nothing of the main loop (no waiter,
/// not durable, no retry, no reply left to it) does not wake it, and is
/// recorded by the next request or within the mailbox's lag. The
/// ordering rule (a request sent after a reply sees the job ended) is
/// `DirectReplyTests`'.
@Suite(.serialized) struct LazyReportTests {
    /// Holds `loop` in its next `.beforeWaiting` until `release` is
    /// signalled; returns once it is held.
    private func hold(_ loop: Loop, until release: DispatchSemaphore) {
        let held = DispatchSemaphore(value: 0)
        loop.add(LoopObserver(activities: .beforeWaiting, repeats: false, order: -1) { _, _ in
            held.signal()
            _ = release.wait(timeout: .now() + 30)
        }, forMode: .common)
        loop.wakeUp()
        #expect(held.wait(timeout: .now() + 20) == .success)
    }

    /// Lengthens `d`'s lag to an hour (a lazy report is then taken only by
    /// a request), and submits a `gate` job without waiting;
    /// returns once it runs.
    private func startGateJob(on d: RunningDaemon, _ gate: GateAction) throws
        -> (scheduler: JobScheduler, client: TestClient, job: String) {
        let scheduler = try #require(d.daemon.server).scheduler
        scheduler.mailbox.setLag(.seconds(3600))
        let c = try d.client()
        let ack = try #require(c.call(#"{"id":"job","op":"submit","action":"gate","worker":"w1","wait":false}"#))
        let job = try #require(ack["job"]?.stringValue)
        #expect(gate.started.wait(timeout: .now() + 20) == .success)
        return (scheduler, c, job)
    }

    /// Lets the gate job end while `d`'s main loop is held (`hold`), and
    /// returns once its end waits in the mailbox; the loop goes on when
    /// the returned semaphore is signalled.
    private func endGateJobWhileHeld(on d: RunningDaemon, _ gate: GateAction, _ scheduler: JobScheduler) throws
        -> DispatchSemaphore {
        let release = DispatchSemaphore(value: 0)
        hold(try #require(d.daemon.loop), until: release)
        gate.open.signal()
        #expect(waitUntil { scheduler.mailbox.holdsReports })
        return release
    }

    /// A job submitted without waiting ends while the main loop is held:
    /// its report waits in the mailbox with no take queued (nothing would
    /// wake the loop for it), and the next request finds it recorded.
    @Test func anEndNoOneWaitsForQueuesNoWakeUp() throws {
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") })
        defer { d.stop() }
        let (scheduler, c, job) = try startGateJob(on: d, gate)

        let release = try endGateJobWhileHeld(on: d, gate, scheduler)
        #expect(!scheduler.mailbox.takeIsQueued, "a lazy end report queued a take, which wakes the main loop")
        release.signal()
        #expect(c.call(#"{"id":"s","op":"status","job":"\#(job)"}"#)?["state"] == "completed")
    }

    /// With a `wait` parked on a job, its end is urgent: the report queues a take.
    @Test func anEndSomeoneWaitsForQueuesATake() throws {
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") })
        defer { d.stop() }
        let (scheduler, client, job) = try startGateJob(on: d, gate)
        defer { withExtendedLifetime(client) {} }  // no hang-up to read
        let waiter = try d.client()
        waiter.send(#"{"id":"w","op":"wait","job":"\#(job)"}"#)
        // Requests are handled in order: once the ping is answered, the wait is parked.
        #expect(waiter.call(#"{"id":"p","op":"ping"}"#)?["id"] == "p")

        let release = try endGateJobWhileHeld(on: d, gate, scheduler)
        #expect(scheduler.mailbox.takeIsQueued, "the end of a job a wait is parked on did not queue a take")
        release.signal()
        let reply = try #require(waiter.readReply())
        #expect(reply["id"] == "w" && reply["state"] == "completed")
    }

    /// With the main loop asleep and no request coming, a lazy end is still
    /// recorded (its journald record written): the lag timer wakes the loop.
    @Test func aLazyEndIsRecordedWithoutARequest() throws {
        let records = CapturedLog()
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") },
                              log: DaemonLogger(Logger(label: "loopd") { _ in records }))
        defer { d.stop() }
        let c = try d.client()
        let ack = try #require(c.call(#"{"id":"job","op":"submit","action":"gate","worker":"w1","wait":false}"#))
        let job = try #require(ack["job"]?.stringValue)
        #expect(gate.started.wait(timeout: .now() + 20) == .success)
        // The main loop sleeps before the job ends: only its lag timer can wake it.
        let loop = try #require(d.daemon.loop)
        #expect(waitUntil { loop.isWaiting })
        gate.open.signal()
        let ended = Logger.MetadataValue.string(MessageID.jobFinished.rawValue)
        #expect(waitUntil { records.records.contains { $0.metadata["JOB_ID"] == .string(job) && $0.metadata["MESSAGE_ID"] == ended } },
                "the end of a job no one waits for was never recorded")
    }

    /// A schedule's timer judges its last run (`overlap`) by the state the
    /// scheduler gives it: an end still in the mailbox counts, though no
    /// request came to take it.
    @Test func aScheduleJudgesItsLastRunByAnEndStillInTheMailbox() throws {
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") })
        defer { d.stop() }
        // The submitting client stays connected: a connection's hang-up is
        // read, and every read takes the mailbox first.
        let (scheduler, client, job) = try startGateJob(on: d, gate)
        defer { withExtendedLifetime(client) {} }
        // The job ends while the main loop is held, so its end is surely in
        // the mailbox when the loop next runs a block.
        let release = try endGateJobWhileHeld(on: d, gate, scheduler)
        release.signal()
        #expect(d.daemon.onMainThread { $0.scheduler.state(ofJob: job) } == .completed,
                "the schedule would see its last run still running and skip a slot")
    }

    /// A `wait` whose timeout comes due in the pass that also takes its
    /// job's end answers with the end: the timer records the reports first.
    @Test func aWaitTimingOutAfterItsJobEndedAnswersTheEnd() throws {
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") })
        defer { d.stop() }
        let (scheduler, client, job) = try startGateJob(on: d, gate)
        defer { withExtendedLifetime(client) {} }  // no hang-up to read
        let waiter = try d.client()
        let parked = Date()
        waiter.send(#"{"id":"w","op":"wait","job":"\#(job)","timeout_ms":2000}"#)
        #expect(waiter.call(#"{"id":"p","op":"ping"}"#)?["id"] == "p")

        // The main loop held: the job ends (its report queues a take, for
        // the parked wait), and the wait's timeout passes meanwhile, so
        // both are due in the loop's next pass, the timer first.
        let release = try endGateJobWhileHeld(on: d, gate, scheduler)
        Thread.sleep(until: parked.addingTimeInterval(2.5))
        release.signal()
        let reply = try #require(waiter.readReply())
        #expect(reply["id"] == "w" && reply["state"] == "completed", "\(reply)")
    }

    // MARK: the mailbox's bookkeeping

    @Test func aLazyPostArmsTheLagOnceAndAnUrgentOneQueuesOneTake() {
        var s = MailboxState<Int>()
        var steps: [MailboxState<Int>.Step] = []
        for (report, urgent) in [(1, false), (2, false), (3, true), (4, true)] { steps.append(s.post(report, urgent: urgent)) }
        // The second urgent post finds the first's take still queued.
        #expect(steps == [.armLag, .none, .queueTake, .none])
        var taken: [Int] = []
        s.takeAll(swappingWith: &taken)
        #expect(taken == [1, 2, 3, 4])
        // The lag timer is still armed: its firing takes the next lazy report.
        steps = [s.post(5, urgent: false)]
        s.lagFired()
        steps += [s.post(6, urgent: false), s.post(7, urgent: true)]
        #expect(steps == [.none, .armLag, .queueTake])
    }

    @Test func aHurryQueuesATakeOnlyForWaitingReports() {
        var s = MailboxState<Int>()
        var hurried = [s.hurry()]
        _ = s.post(1, urgent: false)
        hurried += [s.hurry(), s.hurry()]
        var taken: [Int] = []
        s.takeAll(swappingWith: &taken)
        hurried.append(s.hurry())
        // Empty: none; a report: one take, not a second; taken: none.
        #expect(hurried == [false, true, false, false])
    }
}
