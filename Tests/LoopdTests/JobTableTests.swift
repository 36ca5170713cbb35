import Testing
@testable import LoopdCore

/// Issue 5 (load: RSS returns to its baseline): what the daemon keeps per
/// finished job must not grow with the number of jobs run.
@Suite struct JobTableTests {
    /// Bug job-ids-outgrow-inline-strings (found by the 10-minute soak):
    /// a decimal counter made ids 16 bytes from the millionth job on, each
    /// one a heap allocation kept by the retained window and the journal.
    @Test func jobIDsOutgrowInlineStrings_idsStayWithinFifteenBytes() {
        let startedAt: Int64 = 1_795_350_371_000  // 2026-11-22 in Unix ms
        var ids = JobIDGenerator(startedAtUnixMs: startedAt)
        var seen = Set<String>()
        for _ in 0..<10_000 { #expect(seen.insert(ids.next()).inserted) }
        #expect(seen.allSatisfy { $0.utf8.count <= 15 })
        // The 36^6-th id is the last of six counter digits.
        let prefix = String(UInt64(startedAt), radix: 36) + "-"
        #expect(prefix.utf8.count == 9)
        #expect((prefix + String(UInt64(2_176_782_335), radix: 36)).utf8.count == 15)
        #expect(ids.next() == prefix + String(10_001, radix: 36))
    }

    @Test func idsOfDifferentStartsDiffer() {
        var a = JobIDGenerator(startedAtUnixMs: 1_795_350_371_000)
        var b = JobIDGenerator(startedAtUnixMs: 1_795_350_371_001)
        #expect(a.next() != b.next())
    }

    /// The retained window forgets the oldest finished job first, keeps
    /// exactly `capacity`, and its storage stops growing once full.
    @Test func finishedWindowEvictsOldestFirst() {
        var window = FinishedWindow(capacity: 3)
        #expect(window.add("a") == nil && window.add("b") == nil && window.add("c") == nil)
        #expect(window.add("d") == "a")
        #expect(window.add("e") == "b")
        #expect(window.add("f") == "c")
        #expect(window.add("g") == "d")
        #expect(window.count == 3)
        var evicted: [String] = []
        for i in 0..<1_000 { if let e = window.add("x\(i)") { evicted.append(e) } }
        #expect(evicted.prefix(3) == ["e", "f", "g"])
        #expect(evicted.suffix(2) == ["x995", "x996"])
        #expect(window.count == 3)
    }
}

/// A worker's ready queue (WorkerLane): arrival order, jobs of another mode
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
