import Dispatch
import Foundation
import Glibc
import LoopPlatform
import LoopdProtocol
import Testing
@testable import LoopdCore

/// A store that records what the scheduler tells it.
final class RecordingStore: JobStore, @unchecked Sendable {
    let told = Locked<[String]>([])

    func keep(_ job: Job) { told.withLock { $0.append("keep \(job.id)") } }

    func keepEnd(of job: Job, _ end: Job.End) {
        told.withLock { $0.append("end \(job.id) \(end.protocolState.rawValue) \(job.result?.serialized() ?? "")") }
    }

    func finished(id: String) -> FinishedJob? { nil }
}

/// The store of jobs as a seam (docs/ARCHITECTURE.md, "The store of jobs"):
/// what the scheduler tells a job's store, and that an end reads the same
/// whichever store holds it.
@Suite(.serialized) struct JobStoreTests {
    @Test("store seam: a fleet job's attempt is kept by the fleet's store, which is told its end; the place its end frees is told")
    func aFleetAttemptIsKeptByTheFleetStore() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let store = RecordingStore()
        let freed = Locked<[String]>([])
        try onMainLoop(d) { s in
            s.join(fleet: store) { queue in freed.withLock { $0.append(queue.worker.name) } }
            var request = SubmitRequest(action: "echo", args: ["hello"], placement: .worker("w2"), wait: false)
            request.fleet = true
            let owner = JobOwner(uid: getuid(), gid: getgid())
            let run = FleetRun(jobID: 7, attempt: 1, retryBackoffMs: 0)
            do {
                let job = try s.accept(request, submitter: JobSubmitter(owner, fleetRun: run), jobID: FleetJobID.local(7, attempt: 1),
                                       submittedAt: unixMilliseconds())
                s.dispatch(job, ack: nil)
            } catch {
                Issue.record("the attempt was refused: \(error)")
            }
        }
        #expect(waitUntil { store.told.withLock { $0.count } == 2 })
        #expect(store.told.withLock { $0 } == ["keep f-7.1", #"end f-7.1 completed {"output":"hello"}"#])
        #expect(waitUntil { freed.withLock { $0 } == ["w2"] })
    }

    @Test("store seam: a local job that is not durable has no store; a durable one is the journal's, not the fleet's")
    func onlyDurableLocalJobsAreKept() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let store = RecordingStore()
        try onMainLoop(d) { s in s.join(fleet: store) { _ in } }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"submit","action":"echo","args":["a"],"wait":true}"#)?["state"]?.stringValue == "completed")
        let durable = c.call(#"{"id":2,"op":"submit","action":"echo","args":["b"],"wait":true,"durable":true}"#)
        #expect(durable?["state"]?.stringValue == "completed")
        let id = try #require(durable?["job"]?.stringValue)
        // The lane wrote the reply; the main loop records the end (and journals it) when it takes the lane's report.
        #expect(waitUntil { d.daemon.onMainThread { $0.scheduler.journal?.finishedStatus(id: id)?.state } == "completed" })
        #expect(store.told.withLock { $0 }.isEmpty, "both ends are recorded, and neither went to the fleet's store")
    }

    @Test("ended-job view: a durable job's end reads the same from the job table and, after a restart, from the journal")
    func anEndReadsTheSameFromEitherStore() throws {
        let first = RunningDaemon()
        let c = try first.client()
        let submitted = c.call(#"{"id":1,"op":"submit","action":"fail","args":["boom"],"durable":true,"retries":1,"wait":true}"#)
        let job = try #require(submitted?["job"]?.stringValue)
        #expect(submitted?["state"]?.stringValue == "failed")
        let wait = #"{"id":"w","op":"wait","job":"\#(job)"}"#
        let status = #"{"id":"s","op":"status","job":"\#(job)"}"#
        c.send(wait)
        let waitedBefore = try #require(c.readLine())
        let statusBefore = try #require(c.call(status))
        first.stop()

        let second = RunningDaemon(configure: { $0.server.stateDirectory = first.directory + "/state" })
        defer { second.stop() }
        let c2 = try second.client()
        #expect(second.daemon.onMainThread { $0.scheduler.table[job] } == nil, "the end is the journal's only now")
        c2.send(wait)
        #expect(c2.readLine() == waitedBefore, "a wait's reply is byte for byte the same")
        let statusAfter = try #require(c2.call(status))
        // The journal keeps less than the table (no priority, arguments or
        // usage); every field it does keep reads as it did.
        guard case .object(let before) = statusBefore, case .object(let after) = statusAfter else {
            Issue.record("status did not answer an object: \(statusBefore) \(statusAfter)")
            return
        }
        let kept = Dictionary(before, uniquingKeysWith: { a, _ in a })
        #expect(after.count >= 10, "\(after)")
        for (key, value) in after { #expect(kept[key] == value, "\(key)") }
    }
}
