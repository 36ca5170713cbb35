import Foundation
import LoopdProtocol
import Testing
@testable import LoopdCore

/// `jobs`, `workers` and `metrics` answer from indexes and counts kept as
/// jobs move (`JobIndex`, `WorkerQueue.held`), not by walking every job:
/// a filtered page looks at no job of other workers or states, however
/// many there are.
@Suite struct IndexedFiguresTests {
    /// A filtered `jobs` page looks at the same number of jobs whether or
    /// not thousands of jobs of another worker, or in other states, exist;
    /// `workers` counts held jobs as a walk would.
    @Test func aFilteredPageDoesNotGrowWithUnrelatedJobs() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        func visited(_ filters: String) -> Int? {
            _ = c.call(#"{"id":"v","op":"jobs"\#(filters),"limit":5}"#)
            // Written by the main loop before it sent the reply just read.
            return d.daemon.server?.scheduler.lastPageVisited
        }
        func submitMany(_ n: Int, _ fields: String) {
            for i in 0..<n { c.send(#"{"id":\#(i),"op":"submit","action":"noop",\#(fields)}"#) }
            for _ in 0..<n { _ = c.readLine() }
        }
        submitMany(3, #""worker":"w1","delay_ms":600000,"wait":false"#)
        submitMany(2, #""worker":"w1""#)
        let filters = [#","worker":"w1""#, #","state":"completed""#, #","state":"running""#,
                       #","state":["delayed","completed"],"worker":"w1""#]
        let before = filters.map(visited)
        #expect(before == [5, 2, 0, 5], "\(before)")

        submitMany(1000, #""worker":"w2","delay_ms":600000,"wait":false"#)
        submitMany(200, #""worker":"w2","mode":"maintenance","wait":false"#)
        #expect(filters.map(visited) == before, "unrelated jobs were looked at")

        // The held count comes from counts kept as jobs move: it matches the jobs listed as held.
        let w2 = c.call(#"{"id":"w","op":"workers"}"#)?["workers"]?.arrayValue?.first { $0["name"] == "w2" }
        #expect(w2?["held"] == 200 && w2?["queued"] == 1200)
        #expect(c.call(#"{"id":"h","op":"jobs","state":"held","limit":1000}"#)?["jobs"]?.arrayValue?.count == 200)
        // Switched to their mode, the held jobs run; the delayed ones never counted as held.
        #expect(c.call(#"{"id":"m","op":"mode","worker":"w2","mode":"maintenance"}"#)?.ok == true)
        #expect(c.waitForHeld("w2", 0))
    }

    /// The set every index is made of keeps its members in order through
    /// any mix of inserts (in order or not), removals and re-inserts.
    @Test func aSequenceSetMatchesASortedReference() {
        var set = SequenceSet()
        var reference = Set<UInt64>()
        var rng = SystemRandomNumberGenerator()
        var next: UInt64 = 1
        for step in 0..<20_000 {
            let roll = Int.random(in: 0..<10, using: &rng)
            if roll < 5 || reference.isEmpty {
                set.insert(next)
                reference.insert(next)
                next += UInt64.random(in: 1...3, using: &rng)
            } else if roll < 9 {
                let victim = reference.randomElement(using: &rng)!
                let removed = set.remove(victim)
                #expect(removed)
                reference.remove(victim)
            } else {
                let old = UInt64.random(in: 1..<next, using: &rng)
                if !reference.contains(old) {
                    set.insert(old)
                    reference.insert(old)
                }
            }
            if step % 997 == 0 || step == 19_999 {
                var seen: [UInt64] = []
                set.forEach(after: nil) { seen.append($0); return true }
                #expect(seen == reference.sorted() && set.count == reference.count)
                let cut = next / 2
                var after: [UInt64] = []
                var members = set.members(after: cut)
                while let s = members.pop() { after.append(s) }
                #expect(after == reference.filter { $0 > cut }.sorted())
            }
        }
        let removedAbsent = set.remove(next + 10)
        #expect(!removedAbsent)
    }
}
