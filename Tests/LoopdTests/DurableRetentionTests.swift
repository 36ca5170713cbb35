import Foundation
import Testing
@testable import LoopdCore

/// The journal's retained ends of durable jobs, bounded by bytes.
@Suite struct DurableRetentionTests {
    /// Finished durable jobs are bounded by bytes as live ones are
    /// (`limits.max_retained_bytes`, estimated alike): past the bound the
    /// oldest ends are forgotten, per uid they are counted for
    /// `quotas.max_durable_retained_bytes`, and compaction leaves the
    /// forgotten records out of the file.
    @Test func durableEndsAreBoundedByBytesAndShrinkTheFileAtCompaction() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let output = String(repeating: "z", count: 1000)
        func end(_ i: Int) -> FinishedJob {
            FinishedJob(id: "job-\(i)", state: "completed", resultJSON: #"{"output":"\#(output)"}"#, finishedAt: 9_000 + Int64(i),
                        clientUID: 1000, details: .init(submittedAt: 9_000, startedAt: 9_000, worker: "w1", action: "echo"))
        }
        let each = end(0).retainedBytes
        let journal = try JobJournal(directory: dir, fsync: false, retentionSeconds: 3600, compactionThresholdBytes: 4096,
                                     retainedByteLimit: each * 10, clock: { 10_000 })
        for i in 0..<100 {
            journal.appendFinished(end(i))
            try journal.commit()
        }
        #expect(journal.stats.retainedFinished == 10)
        #expect(journal.stats.retainedFinishedBytes == each * 10)
        #expect(journal.retainedFinishedBytes(of: 1000) == each * 10 && journal.retainedFinishedBytes(of: 1001) == 0)
        #expect(journal.finishedStatus(id: "job-89") == nil && journal.finishedStatus(id: "job-90") != nil)
        try journal.compactIfNeeded()
        #expect(journal.stats.fileBytes < 10 * (output.utf8.count + 200) + 4096, "\(journal.stats.fileBytes) bytes kept")
        let reopened = try JobJournal(directory: dir, fsync: false, retentionSeconds: 3600, retainedByteLimit: each * 10,
                                      clock: { 10_000 })
        #expect(reopened.recovered.finished.map(\.id) == (90..<100).map { "job-\($0)" })
    }
}
