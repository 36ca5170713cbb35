import Testing
@testable import LoopdCore
import LoopPlatform

/// What the daemon keeps per finished job must not grow with the number of
/// jobs run (under load, RSS returns to its baseline).
@Suite struct JobTableTests {
    /// Bug job-ids-outgrow-inline-strings (found by the 10-minute soak):
    /// a decimal counter made ids 16 bytes from the millionth job on, each
    /// one a heap allocation kept by the retained window and the journal.
    /// Opaque ids are 13 base-36 digits for every sequence a run can reach.
    @Test func jobIDsOutgrowInlineStrings_idsStayWithinFifteenBytes() {
        var ids = JobIDGenerator(key: JobIDKey(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210))
        var seen = Set<String>()
        for _ in 0..<10_000 { #expect(seen.insert(ids.next().id).inserted) }
        #expect(seen.allSatisfy { $0.utf8.count == 13 })
        #expect(ids.codec.id(of: JobIDCodec.maxSequence).utf8.count == 13)
        #expect(ids.next() == (10_001, ids.codec.id(of: 10_001)))
        // A replayed job keeps its id and takes the next sequence.
        #expect(ids.next(keeping: "old-7") == (10_002, "old-7") && ids.accepted == 10_002)
    }

    /// Ids stay unique across restarts: a new id that an earlier run's job
    /// still answers to is passed over, and its sequence goes to no job.
    @Test func aNewIDThatAnEarlierRunsJobHoldsIsPassedOver() {
        var ids = JobIDGenerator(key: JobIDKey(7, 11))
        let taken = ids.codec.id(of: 1)
        let (sequence, id) = ids.next { $0 == taken }
        #expect(sequence == 2 && id == ids.codec.id(of: 2))
        #expect(ids.accepted == 1 && ids.lastSequence == 2)
    }

    /// The table forgets the oldest ended job first, keeps exactly its
    /// capacity of ended jobs, and lists only what it still knows.
    @Test func endedJobsAreForgottenOldestFirst() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        var table = JobTable(retainedCapacity: 3)
        let jobs = (0..<7).map { fixture.job("j\($0)") }
        for job in jobs { table.insert(job) }
        #expect(table.retain(jobs[0]).isEmpty && table.retain(jobs[1]).isEmpty && table.retain(jobs[2]).isEmpty)
        #expect(table.retain(jobs[3]).map(\.id) == ["j0"])
        #expect(table.retain(jobs[5]).map(\.id) == ["j1"])
        #expect(table["j0"] == nil && table["j1"] == nil && table["j2"] === jobs[2])
        #expect(table.count == 5)  // j2 j3 j5 retained, j4 j6 not ended
        #expect(table.page(after: nil, limit: 10) { _ in true }.jobs.map(\.id) == ["j2", "j3", "j4", "j5", "j6"])
    }

    /// `limits.retention_failed_*`: failures are kept apart, so a stream
    /// of successes does not push them out; they go by their own count and
    /// age; a discarded job leaves at once and gives its place back.
    @Test func failuresAreKeptApartByCountAndAge() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        var table = JobTable(retainedCapacity: 2)
        table.keepFailures(count: 2, bytes: .max, forMs: 60_000)
        let jobs = (0..<10).map { fixture.job("j\($0)") }
        for job in jobs { table.insert(job) }
        #expect(table.retain(jobs[0], failed: true, nowMs: 1_000).isEmpty)
        #expect(table.retain(jobs[1], failed: true, nowMs: 2_000).isEmpty)
        for k in 2..<6 { _ = table.retain(jobs[k], nowMs: 3_000) }
        #expect(table["j0"] === jobs[0] && table["j1"] === jobs[1], "successes pushed the failures out")
        #expect(table["j2"] == nil && table["j5"] === jobs[5])
        #expect(table.retain(jobs[6], failed: true, nowMs: 4_000).map(\.id) == ["j0"], "the failures' own bound")
        #expect(table.retainedFailures.count == 2)
        table.discard(jobs[1])
        #expect(table["j1"] == nil && table.retainedFailures.count == 1)
        #expect(table.retain(jobs[7], failed: true, nowMs: 5_000).isEmpty, "a discarded job gave its place back")
        #expect(table.retain(jobs[8], nowMs: 64_500).map(\.id).sorted() == ["j4", "j6"], "a failure past its age")
    }

    /// `limits.max_retained_bytes`: finished jobs are forgotten oldest first
    /// once their estimated bytes pass the bound, however few they are; a
    /// large result costs more than a small one; the newest is always kept.
    @Test func retainedResultsAreBoundedByBytesOldestFirst() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        let small = fixture.job("s0")
        small.result = .object([("output", .string("hi"))])
        let smallBytes = small.retainedBytes
        #expect(smallBytes >= Job.retainedFixedBytes)
        let big = fixture.job("b0")
        big.result = .object([("output", .string(String(repeating: "x", count: 10_000)))])
        #expect(big.retainedBytes >= smallBytes + 10_000)

        var table = JobTable(retainedCapacity: 1_000, retainedByteLimit: smallBytes * 5)
        var jobs: [Job] = []
        for k in 0..<8 {
            let job = fixture.job("s\(k)")
            job.result = .object([("output", .string("hi"))])
            jobs.append(job)
            table.insert(job)
        }
        var forgotten: [String] = []
        for job in jobs { forgotten += table.retain(job).map(\.id) }
        #expect(forgotten == ["s0", "s1", "s2"])
        #expect(table.retainedCount == 5 && table.retainedBytes == smallBytes * 5)
        #expect(table["s2"] == nil && table["s3"] === jobs[3])

        // One large result pushes out as many small ones as its bytes need,
        // and stays though it alone is over the bound.
        let large = fixture.job("large")
        large.result = big.result
        table.insert(large)
        #expect(table.retain(large).map(\.id) == ["s3", "s4", "s5", "s6", "s7"])
        #expect(table.retainedCount == 1 && table["large"] === large)
        #expect(table.retainedBytes == large.retainedBytes)

        // A lower bound (a reload) applies at the next end.
        var loose = JobTable(retainedCapacity: 1_000)
        for job in jobs.prefix(4) {
            loose.insert(job)
            _ = loose.retain(job)
        }
        loose.retainedByteLimit = smallBytes * 2
        let next = fixture.job("next")
        next.result = .object([("output", .string("hi"))])
        loose.insert(next)
        #expect(loose.retain(next).count == 3 && loose.retainedCount == 2)
    }

    /// `jobs` pages: in submission order, after a cursor, with `more` set
    /// only when another match follows; jobs inserted between pages come
    /// after the cursor, so no job is listed twice or skipped.
    @Test func pagesFollowSubmissionOrderAcrossInserts() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        var table = JobTable(retainedCapacity: 100)
        var all: [Job] = []
        for k in 0..<10 {
            let job = fixture.job("j\(k)")
            all.append(job)
            table.insert(job)
        }
        var listed: [String] = []
        var after: UInt64?
        var pages = 0
        while true {
            let (jobs, more) = table.page(after: after, limit: 3) { $0.id != "j4" }
            listed += jobs.map(\.id)
            pages += 1
            if pages == 2 {
                for k in 10..<12 {
                    let job = fixture.job("j\(k)")
                    table.insert(job)
                }
            }
            guard more else { break }
            after = jobs.last!.sequence
        }
        #expect(listed == ["j0", "j1", "j2", "j3", "j5", "j6", "j7", "j8", "j9", "j10", "j11"])
        #expect(pages == 4)
        #expect(table.page(after: all[8].sequence, limit: 1) { _ in true }.jobs.map(\.id) == ["j9"])
    }

    /// Sweeping forgotten jobs out of the submission order keeps the order.
    @Test func forgottenJobsAreSweptWithoutReordering() {
        let fixture = JobFixture()
        defer { fixture.stop() }
        var table = JobTable(retainedCapacity: 10)
        var jobs: [Job] = []
        for k in 0..<5_000 {
            let job = fixture.job("j\(k)")
            jobs.append(job)
            table.insert(job)
            if k % 2 == 0 { _ = table.retain(job) }
        }
        let (listed, _) = table.page(after: nil, limit: 100_000) { _ in true }
        #expect(listed.count == 2_500 + 10)
        #expect(zip(listed, listed.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
        #expect(listed.suffix(3).map(\.id) == ["j4997", "j4998", "j4999"])
    }
}

/// The reused lists of the loop and the scheduler (ready sources, due
/// timers, lane reports) are emptied in place: nothing is left in them,
/// what they held is released, and their storage stays for the next pass.
@Suite struct ListReuseTests {
    private final class Tracked {}

    @Test(arguments: [0, 1, 2, 4, 5, 100])
    func emptiesReleasesAndKeepsTheStorage(count: Int) {
        var list: [Tracked] = []
        list.reserveCapacity(128)
        weak var last: Tracked?
        for _ in 0..<count {
            let t = Tracked()
            last = t
            list.append(t)
        }
        let capacity = list.capacity
        list.removeAllKeepingCapacity()
        #expect(list.isEmpty)
        #expect(list.capacity == capacity)
        #expect(last == nil)
    }

    @Test func storageLargerThanTheBoundIsFreed() {
        var list = [Int](repeating: 7, count: 2000)
        list.removeAllKeepingCapacity(ifAtMost: 1024)
        #expect(list.isEmpty && list.capacity == 0)
        var small = [1, 2, 3]
        small.reserveCapacity(100)
        let capacity = small.capacity
        small.removeAllKeepingCapacity(ifAtMost: 1024)
        #expect(small.isEmpty && small.capacity == capacity)
    }
}

/// A worker's ready queue (JobLane): arrival order, jobs of another mode
/// passed over and kept, and a deep queue drained from the front.
@Suite struct ReadyQueueTests {
    @Test func takesTheOldestAdmittedAndKeepsTheSkippedInOrder() {
        var q = ReadyQueue<Int>()
        q.append(contentsOf: [1, 2, 3, 4, 5])
        #expect(q.takeFirst { $0 % 2 == 0 } == 2)  // 1 waits for its mode
        #expect(q.takeFirst { $0 % 2 == 0 } == 4)
        #expect(q.takeFirst { $0 % 2 == 0 } == nil)
        #expect(q.count == 3)
        #expect(q.takeFirst { _ in true } == 1)
        q.append(contentsOf: [6])
        var rest: [Int] = []
        while let x = q.takeFirst(where: { _ in true }) { rest.append(x) }
        #expect(rest == [3, 5, 6] && q.isEmpty)
    }

    /// Bug ready-queue-quadratic: the lane removed each started job from the
    /// front of an array, moving every later one; a worker holding
    /// `max_queued_jobs_per_worker` (100,000) jobs spent seconds shuffling.
    /// Order must survive the compactions the head index does instead.
    @Test func readyQueueQuadratic_aDeepQueueDrainsInOrderAcrossCompactions() {
        var q = ReadyQueue<Int>()
        q.append(contentsOf: 0..<100_000)
        var next = 0
        var inOrder = true
        for round in 0..<50_000 {
            guard let x = q.takeFirst(where: { _ in true }) else { break }
            inOrder = inOrder && x == next
            next += 1
            if round % 10_000 == 0 { q.append(contentsOf: (100_000 + round)..<(100_000 + round + 1)) }
        }
        #expect(inOrder && next == 50_000)
        #expect(q.count == 50_005)
        var tail: [Int] = []
        while let x = q.takeFirst(where: { _ in true }) { tail.append(x) }
        #expect(tail == Array(50_000..<100_000) + [100_000, 110_000, 120_000, 130_000, 140_000])
    }
}
