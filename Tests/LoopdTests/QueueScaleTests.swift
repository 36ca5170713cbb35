import LoopPlatform
import LoopdProtocol
import Testing
@testable import LoopdCore

/// What lets loopd hold a million queued jobs in less memory per job than
/// beanstalkd, and replay a journal of them faster (Benchmarks/README.md,
/// "A million jobs"): a small job, one heap entry per delayed job, a job
/// table without a hash entry per job, and a journal recovery that neither
/// copies nor regrows.
@Suite struct QueueScaleTests {
    /// A queued job stays within one 160-byte allocation: a field added to
    /// `Job` that is not shared or rare shows here before it shows in the
    /// million-job benchmark.
    @Test func aPlainJobIsOneSmallAllocation() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        let plain = fixture.job("p1", SubmitRequest(action: "noop", wait: false, delayMs: 3_600_000))
        let bytes = Memory.allocationSize(of: plain)
        #expect(bytes <= 152, "a Job takes \(bytes) bytes")
        // Defaults make no side record; any rare field does, and reads back.
        #expect(plain.extras == nil && plain.placement == .any && plain.retries == 0 && plain.modes == [.default])
        var rare = SubmitRequest(action: "noop", placement: .key("k"), wait: false, mode: "common", expiresInMs: 5)
        rare.retries = 2
        rare.uniqueKey = "u"
        let job = fixture.job("p2", rare)
        #expect(job.extras != nil && job.modes == nil)
        #expect(job.placement == .key("k") && job.mode == "common" && job.expiresInMs == 5)
        #expect(job.retries == 2 && job.retryBackoffMs == rare.retryBackoffMs && job.uniqueKey == "u")
        #expect(job.actionName == "noop" && job.args.isEmpty && job.reply == nil && job.priority == rare.priority
                && job.delayMs == 0 && job.timeoutMs == nil && !job.durable)
        // What only an ended job has is made when first set, not before.
        #expect(plain.result == nil && plain.retry.isEmpty)
        plain.result = .object([])
        #expect(plain.result == .object([]))
    }

    /// Delays and expiries wait in an indexed heap: due jobs come out by
    /// instant, equal instants in submission order; a job taken out in the
    /// middle (cancelled, ended) leaves the others in order.
    @Test func deadlineHeapReleasesByInstantThenSubmission() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        let heap = JobDeadlines(.delay)
        let jobs = (0..<8).map { fixture.job("d\($0)") }
        let instants: [UInt64] = [50, 10, 30, 10, 70, 30, 10, 90]
        for (job, at) in zip(jobs, instants) { heap.insert(job, deadline: at) }
        #expect(heap.count == 8 && heap.earliest == 10)
        heap.remove(jobs[3])
        heap.remove(jobs[3])  // twice: nothing
        #expect(jobs[3].delaySlot == -1 && heap.count == 7)
        #expect(heap.takeDue(now: 30).map(\.id) == ["d1", "d6", "d2", "d5"])
        #expect(heap.takeDue(now: 60).map(\.id) == ["d0"])
        #expect(heap.takeDue(now: 1000).map(\.id) == ["d4", "d7"])
        #expect(heap.count == 0 && jobs.allSatisfy { $0.delaySlot == -1 })
        // The expiry heap keeps its own slot: one job may be in both.
        let both = JobDeadlines(.expiry)
        heap.insert(jobs[0], deadline: 5)
        both.insert(jobs[0], deadline: 7)
        #expect(jobs[0].delaySlot == 0 && jobs[0].expirySlot == 0)
    }

    /// A delayed job is one entry in the main thread's delay heap until its
    /// delay passes (then it runs on its worker) or it is cancelled (then
    /// it leaves the heap at once); the worker holds nothing for it.
    @Test func delayedJobsWaitInOneHeapAndLeaveItWhenCancelled() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let held = try #require(c.call(#"{"id":1,"op":"submit","action":"noop","delay_ms":3600000,"wait":false}"#)?["job"]?.stringValue)
        #expect(c.call(#"{"id":2,"op":"status","job":"\#(held)"}"#)?["state"] == "delayed")
        #expect(c.call(#"{"id":3,"op":"submit","action":"echo","args":["soon"],"delay_ms":20}"#)?["result"]?["output"] == "soon")
        #expect(d.daemon.onMainThread { $0.scheduler.timing.delays.count } == 1)
        #expect(c.call(#"{"id":4,"op":"cancel","job":"\#(held)"}"#)?["cancelled"] == true)
        #expect(d.daemon.onMainThread { $0.scheduler.timing.delays.count } == 0)
        #expect(c.call(#"{"id":5,"op":"status","job":"\#(held)"}"#)?["state"] == "cancelled")
    }

    /// The job table finds a job of this run by the sequence its id names,
    /// a replayed job by its own id once the replay is sealed, and neither
    /// once it is forgotten; a replayed job's sequence does not answer to
    /// the id this run would have made for it.
    @Test func tableFindsGeneratedAndReplayedIDs() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        var ids = JobIDGenerator(key: JobIDKey(3, 5))
        var table = JobTable(retainedCapacity: 1, ids: ids.codec)
        var jobs: [Job] = []
        // Sequences 1…6: replayed ids (arriving out of order) and ids of this run.
        for k in 0..<6 {
            let replayed = k % 2 == 0
            let (_, id) = ids.next(keeping: replayed ? "old-\(9 - k)" : nil)
            let job = fixture.job(id)
            jobs.append(job)
            table.insert(job, generatedID: !replayed)
        }
        table.sealOtherIDs()
        #expect(table.count == 6)
        for job in jobs { #expect(table[job.id] === job) }
        #expect(table[ids.codec.id(of: 1)] == nil)  // sequence 1 is "old-9"
        #expect(table["old-1"] == nil && table[ids.codec.id(of: 99)] == nil && table["nope"] == nil)
        // Forgotten jobs are not found; the newest retained one is.
        for job in jobs { _ = table.retain(job) }
        #expect(table.count == 1 && table[jobs[5].id] === jobs[5])
        #expect(table[jobs[0].id] == nil && table[jobs[1].id] == nil)
    }

    /// The index of other runs' ids: sorted once, ids over 16 bytes beside
    /// it, and emptied when the last of its jobs is gone.
    @Test func otherIDsAreSortedOnceAndEmptyThemselves() {
        var index = OtherJobIDs()
        let long = String(repeating: "x", count: 40)
        index.insert("b-2", sequence: 1)
        index.insert("a-1", sequence: 2)
        index.insert(long, sequence: 3)
        #expect(index.sequence(of: "a-1") == 2)  // unsorted: still found
        index.seal()
        #expect(index.sequence(of: "a-1") == 2 && index.sequence(of: "b-2") == 1 && index.sequence(of: long) == 3)
        #expect(index.sequence(of: "a-") == nil && index.sequence(of: "c-3") == nil)
        index.removed("a-1")
        index.removed(long)
        #expect(index.live == 1 && index.sequence(of: long) == nil)
        index.removed("b-2")
        #expect(index.isEmpty && index.sequence(of: "b-2") == nil)
    }

    /// The journal's pending jobs stay in submission order through finishes
    /// and the sweeps of their holes; a re-submitted id (a retry's record)
    /// moves to the end; the live bytes match what is pending.
    @Test func pendingJobsKeepTheirOrderThroughSweeps() {
        var state = JournalState()
        state.reservePending(3_000)
        func job(_ i: Int) -> DurableJob {
            DurableJob(id: "j\(i)", action: "noop", args: [], placement: "any", delayMs: 0, timeoutMs: nil, mode: nil,
                       submittedAt: 0, clientUID: 0)
        }
        for i in 0..<3_000 { state.apply(.submitted(job(i)), size: 10) }
        for i in 0..<3_000 where i % 3 != 0 {
            state.apply(.finished(FinishedJob(id: "j\(i)", state: "completed", resultJSON: "{}", finishedAt: 0)), size: 1)
        }
        state.apply(.submitted(job(0)), size: 10)  // j0 again: now last
        let expected = (1..<1_000).map { "j\($0 * 3)" } + ["j0"]
        #expect(state.pendingJobs().map(\.id) == expected)
        #expect(state.pendingCount == 1_000)
        #expect(state.liveBytes == 1_000 * 10 + 2_000 * 1)
    }
}
