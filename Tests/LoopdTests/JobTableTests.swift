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
