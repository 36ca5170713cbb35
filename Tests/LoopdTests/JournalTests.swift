import LoopPlatform
import Glibc
import Testing
@testable import LoopdCore

/// The durable-job journal, and its crash consistency.
@Suite struct JournalTests {
    /// The journal's checksum reads eight bytes a step: every length, every
    /// alignment and every split of a continued checksum gives what the
    /// one-byte-a-step definition gives.
    @Test func checksumMatchesTheBytewiseDefinition() {
        func bytewise(_ bytes: [UInt8]) -> UInt32 {
            var crc: UInt32 = ~0
            for b in bytes {
                crc ^= UInt32(b)
                for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            return ~crc
        }
        var generator = SystemRandomNumberGenerator()
        let data = (0..<80).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<8 {
            for end in start...data.count {
                let slice = data[start..<end]
                #expect(CRC32C.checksum(slice) == bytewise(Array(slice)))
            }
        }
        for split in 0...data.count {
            #expect(CRC32C.checksum(data[split...], continuing: CRC32C.checksum(data[..<split])) == bytewise(data))
        }
    }

    @Test func recordsRoundTripThroughTheFileFormat() throws {
        #expect(CRC32C.checksum(Array("123456789".utf8)[...]) == 0xE306_9283)  // the standard check value
        let records: [JournalRecord] = [
            .submitted(sampleJob(1)), .submitted(sampleJob(2)),
            .finished(FinishedJob(id: "j1", state: "completed", resultJSON: #"{"out":"ü\n"}"#, finishedAt: -5)),
        ]
        var bytes = JournalRecord.fileHeader
        for record in records { try record.encode(into: &bytes) }
        let scan = try JournalScan(bytes, path: "mem")
        #expect(scan.records.map(\.record) == records)
        #expect(scan.validEnd == bytes.count)
    }

    /// The retry tails (a failure's request, the links) and the discarded
    /// record read back as written; a failure outlives retention_seconds
    /// up to its own, and a discard forgets it across a reopen.
    @Test func retryTailsAndDiscardsRoundTripAndFailuresAreKeptLonger() throws {
        var retried = sampleJob(3)
        retried.retryOf = "j0"
        var failure = FinishedJob(id: "j2", state: "failed", resultJSON: "{}", finishedAt: 1_000, clientUID: 7,
                                  details: .init(submittedAt: 900, startedAt: 950, worker: "w1", action: "echo",
                                                 errorCode: "job_failed", errorMessage: "no"))
        failure.details?.links = FinishedJob.Links(request: sampleJob(2), retryOf: nil, retriedAs: "j9")
        let records: [JournalRecord] = [.submitted(retried), .finished(failure), .discarded(id: "j1")]
        var bytes = JournalRecord.fileHeader
        for record in records { try record.encode(into: &bytes) }
        #expect(try JournalScan(bytes, path: "mem").records.map(\.record) == records)

        try withDirectory { dir in
            let open = { (now: Int64) in
                try JobJournal(directory: dir, fsync: false, retentionSeconds: 60, failureRetentionSeconds: 3600,
                               clock: { now })
            }
            let journal = try open(10_000)
            journal.appendFinished(FinishedJob(id: "ok", state: "completed", resultJSON: "{}", finishedAt: 9_000))
            journal.appendFinished(failure)
            journal.appendFinished(FinishedJob(id: "gone", state: "failed", resultJSON: "{}", finishedAt: 9_000))
            try journal.commit()
            journal.appendDiscarded("gone")
            try journal.commit()
            let later = try open(200_000)  // past retention_seconds, within the failures'
            #expect(later.finishedStatus(id: "ok") == nil)
            #expect(later.finishedStatus(id: "j2")?.details?.links == failure.details?.links)
            #expect(later.finishedStatus(id: "gone") == nil, "a discard did not survive the reopen")
        }
    }

    @Test func pendingAndFinishedJobsSurviveReopen() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: false, retentionSeconds: 3600, clock: { 10_000 })
            for i in 0..<3 { journal.appendSubmitted(sampleJob(i)) }
            #expect(journal.hasUncommitted)
            try journal.commit()
            journal.appendFinished(FinishedJob(id: "j1", state: "failed", resultJSON: "{}", finishedAt: 9_000))
            try journal.commit()
            #expect(journal.finishedStatus(id: "j1")?.state == "failed")

            let reopened = try JobJournal(directory: dir, fsync: false, retentionSeconds: 3600, clock: { 10_000 })
            #expect(reopened.pendingJobs() == [sampleJob(0), sampleJob(2)])
            #expect(reopened.recovered.finished.map(\.id) == ["j1"])
            #expect(reopened.recovered.truncatedBytes == 0)
            #expect(reopened.finishedStatus(id: "j1")?.finishedAt == 9_000)
            #expect(reopened.finishedStatus(id: "j0") == nil)
        }
    }

    /// Group commit: one write and one fdatasync per commit, whatever the batch.
    @Test func groupCommitIssuesOneWriteAndOneSyncPerCommit() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60)
            for i in 0..<64 { journal.appendSubmitted(sampleJob(i)) }
            try journal.commit()
            #expect(journal.stats.commits == 1 && journal.stats.syncCalls == 1 && journal.stats.writeCalls == 1)
            #expect(journal.stats.records == 64 && journal.stats.liveJobs == 64)
            try journal.commit()  // nothing appended: no I/O at all
            #expect(journal.stats.commits == 1 && journal.stats.syncCalls == 1)
            journal.appendFinished(FinishedJob(id: "j0", state: "completed", resultJSON: "{}", finishedAt: 1))
            try journal.commit()
            #expect(journal.stats.syncCalls == 2 && journal.stats.liveJobs == 63)
        }
    }

    /// A crash mid-write leaves any prefix of the last record: every one is cut
    /// off, reported, and the records before it survive; appends then work.
    @Test func tornLastRecordIsRepairedAtEveryByteOffset() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
            journal.appendSubmitted(sampleJob(0))
            journal.appendSubmitted(sampleJob(1))
            try journal.commit()
            let goodEnd = journal.stats.fileBytes
            journal.appendSubmitted(sampleJob(2))
            try journal.commit()
            let whole = try readFile(journal.path)
            for cut in goodEnd..<whole.count {
                try writeFile(journal.path, Array(whole[..<cut]))
                let reopened = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
                #expect(reopened.pendingJobs() == [sampleJob(0), sampleJob(1)], "cut at \(cut)")
                #expect(reopened.recovered.truncatedBytes == cut - goodEnd)
                #expect(reopened.recovered.corruptTailPath == nil)
                #expect(try readFile(journal.path).count == goodEnd)
            }
            // A last record that is whole in length but wrong in content is torn too.
            var flipped = whole
            flipped[flipped.count - 1] ^= 0x40
            try writeFile(journal.path, flipped)
            let repaired = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
            #expect(repaired.recovered.truncatedBytes == whole.count - goodEnd)
            repaired.appendSubmitted(sampleJob(3))
            try repaired.commit()
            let after = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
            #expect(after.pendingJobs() == [sampleJob(0), sampleJob(1), sampleJob(3)])
            #expect(after.recovered.truncatedBytes == 0)
        }
    }

    /// A committed record that changed (an intact record follows it) is
    /// corruption, not a crash: start-up refuses the journal with its path
    /// and the byte offset of the bad record, and leaves the file alone.
    @Test func corruptMiddleRecordIsRefusedNamingTheFileAndTheOffset() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60)
            var ends: [Int] = []
            for i in 0..<5 {
                journal.appendSubmitted(sampleJob(i))
                try journal.commit()
                ends.append(journal.stats.fileBytes)
            }
            var bytes = try readFile(journal.path)
            bytes[ends[1] + 12] ^= 0xFF  // inside record 2's payload
            try writeFile(journal.path, bytes)
            do throws(JournalError) {
                _ = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60, clock: { 42 })
                Issue.record("a corrupt journal was opened")
            } catch {
                guard case let .corrupt(path, offset, reason) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(path == dir + "/journal.log" && offset == ends[1])
                #expect(reason.contains("checksum") && reason.contains("intact record follows at byte \(ends[2])"))
                #expect(error.description.contains("journal \(dir)/journal.log is corrupt at byte \(ends[1])"))
                #expect(error.description.contains("loopd --salvage-journal \(dir)/journal.log"))
            }
            #expect(try readFile(journal.path) == bytes)
            #expect(!FileSystem.exists(dir + "/journal.log.corrupt-42"))

            // A length field that changed is refused the same way.
            var length = try readFile(journal.path)
            length[ends[1] + 12] ^= 0xFF  // (undo the payload flip)
            length[ends[1] + 2] ^= 0x40  // record 2's length field
            try writeFile(journal.path, length)
            #expect(throws: JournalError.self) { try JobJournal(directory: dir, fsync: false, retentionSeconds: 60) }
        }
    }

    /// Garbage after the last record, or blocks of a commit in flight that
    /// never reached the disk (zeros, with its later records intact), is
    /// what a crash leaves: the journal opens, cut at the damage; intact
    /// records past zeros are kept in a side file.
    @Test func crashShapedDamageIsCutAndTheJournalOpens() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60)
            var ends: [Int] = []
            for i in 0..<4 {
                journal.appendSubmitted(sampleJob(i))
                try journal.commit()
                ends.append(journal.stats.fileBytes)
            }
            let whole = try readFile(journal.path)
            var zeroed = whole
            for k in ends[1]..<ends[2] { zeroed[k] = 0 }  // record 2 never written, 3 was
            try writeFile(journal.path, zeroed)
            let reopened = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60, clock: { 7 })
            #expect(reopened.pendingJobs() == [sampleJob(0), sampleJob(1)])
            #expect(reopened.recovered.damagedAt == ends[1] && reopened.recovered.truncatedBytes == whole.count - ends[1])
            #expect(reopened.recovered.corruptTailPath == dir + "/journal.log.corrupt-7")
            #expect(try readFile(dir + "/journal.log.corrupt-7") == Array(zeroed[ends[1]...]))

            var garbage = try readFile(journal.path)
            let good = garbage.count
            var state: UInt32 = 12345
            for _ in 0..<300 {
                state = state &* 1_103_515_245 &+ 12_345
                garbage.append(UInt8(truncatingIfNeeded: state >> 16))
            }
            try writeFile(journal.path, garbage)
            let again = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60)
            #expect(again.recovered.truncatedBytes == 300 && again.recovered.damagedAt == good)
            #expect(again.recovered.corruptTailPath == nil && again.pendingJobs().count == 2)
        }
    }

    /// `loopd --salvage-journal`: every intact record is kept, those after
    /// the damage too; the file as it was is saved beside it; the salvaged
    /// journal opens, and a second salvage finds nothing to do.
    @Test func salvageKeepsEveryIntactRecordAndSavesTheOriginal() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
            var ends: [Int] = []
            for i in 0..<5 {
                journal.appendSubmitted(sampleJob(i))
                try journal.commit()
                ends.append(journal.stats.fileBytes)
            }
            var bytes = try readFile(journal.path)
            bytes[ends[1] + 12] ^= 0xFF  // record 2 damaged
            try writeFile(journal.path, bytes)
            let report = try JournalSalvage.salvage(path: journal.path, fsync: false, clock: { 99 })
            #expect(report.keptRecords == 4 && report.savedAs == journal.path + ".corrupt-99")
            #expect(report.damaged.count == 1 && report.damaged[0].offset == ends[1])
            #expect(report.damaged[0].bytes == ends[2] - ends[1] && report.damaged[0].reason.contains("checksum"))
            #expect(try readFile(journal.path + ".corrupt-99") == bytes)
            #expect(report.lines(path: "J").last == "J: kept 4 intact records (\(report.keptBytes) bytes); the file as it was is saved as \(journal.path).corrupt-99")

            let reopened = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
            #expect(reopened.pendingJobs() == [sampleJob(0), sampleJob(1), sampleJob(3), sampleJob(4)])
            #expect(reopened.recovered.truncatedBytes == 0)
            let second = try JournalSalvage.salvage(path: journal.path, fsync: false)
            #expect(second.savedAs == nil && second.damaged.isEmpty && second.keptRecords == 4)
            #expect(second.lines(path: "J") == ["J: no damage; 4 records, nothing to do"])

            // The command: 0 once salvaged, 1 for a file that is not a journal
            // (left alone), 2 without a path.
            try writeFile(journal.path, bytes)
            #expect(DaemonMain.run(arguments: ["--salvage-journal", journal.path]) == 0)
            #expect(try JobJournal(directory: dir, fsync: false, retentionSeconds: 60).pendingJobs().count == 4)
            try writeFile(dir + "/other", Array("not a journal".utf8))
            #expect(DaemonMain.run(arguments: ["--salvage-journal", dir + "/other"]) == 1)
            #expect(try readFile(dir + "/other") == Array("not a journal".utf8))
            #expect(DaemonMain.run(arguments: ["--salvage-journal"]) == 2)
        }
    }

    @Test func aFileThatIsNotAJournalIsRefusedAndLeftAlone() throws {
        try withDirectory { dir in
            try writeFile(dir + "/journal.log", Array("hello, not a journal".utf8))
            #expect(throws: JournalError.self) { try JobJournal(directory: dir, fsync: false, retentionSeconds: 1) }
            #expect(try readFile(dir + "/journal.log") == Array("hello, not a journal".utf8))
        }
    }

    /// Compaction keeps pending jobs and retained finishes, drops finished
    /// submits and expired finishes, and carries uncommitted appends over.
    /// A crash before its rename leaves a stray copy, which start-up ignores.
    @Test func compactionKeepsLiveStateAndDropsExpired() throws {
        try withDirectory { dir in
            var now: Int64 = 1_700_000_000_000  // the injected clock
            let journal = try JobJournal(directory: dir, fsync: true, retentionSeconds: 10,
                                         compactionThresholdBytes: 1024, clock: { now })
            for i in 0..<100 { journal.appendSubmitted(sampleJob(i)) }
            for i in 0..<90 { journal.appendFinished(FinishedJob(id: "j\(i)", state: "completed", resultJSON: "{}", finishedAt: now)) }
            try journal.commit()
            try journal.compactIfNeeded()  // 90 submit+finish pairs: the submits are dead
            #expect(journal.stats.compactions == 1 && journal.stats.retainedFinished == 90)
            now += 11_000
            for i in 90..<95 { journal.appendFinished(FinishedJob(id: "j\(i)", state: "failed", resultJSON: "{}", finishedAt: now)) }
            try journal.commit()
            let before = journal.stats
            journal.appendSubmitted(sampleJob(100))  // uncommitted across the compaction
            try journal.compactIfNeeded()
            #expect(journal.stats.compactions == before.compactions + 1)
            #expect(journal.stats.fileBytes < before.fileBytes / 4)
            #expect(!JournalFile.exists(journal.path + ".compact"))
            #expect(journal.finishedStatus(id: "j0") == nil && journal.finishedStatus(id: "j90") != nil)
            try journal.compactIfNeeded()  // now mostly live: no rewrite
            #expect(journal.stats.compactions == before.compactions + 1)
            try journal.commit()

            try writeFile(journal.path + ".compact", JournalRecord.fileHeader + [1, 2, 3])
            let reopened = try JobJournal(directory: dir, fsync: true, retentionSeconds: 10, clock: { now })
            #expect(reopened.pendingJobs() == (95...100).map { sampleJob($0) })
            #expect(reopened.recovered.finished.map(\.id) == (90..<95).map { "j\($0)" })
            #expect(!JournalFile.exists(journal.path + ".compact"))
        }
    }

    /// `nextExpiry` names when the oldest retained finish passes retention,
    /// which is when the daemon's idle timer expires it (bug
    /// durable-results-held-while-idle); nil once none is retained.
    @Test func nextExpiryFollowsTheOldestRetainedFinish() throws {
        try withDirectory { dir in
            var now: Int64 = 1_700_000_000_000
            let journal = try JobJournal(directory: dir, fsync: false, retentionSeconds: 10, clock: { now })
            #expect(journal.nextExpiry == nil)
            journal.appendSubmitted(sampleJob(0))
            journal.appendSubmitted(sampleJob(1))
            try journal.commit()
            #expect(journal.nextExpiry == nil)  // pending jobs never expire
            journal.appendFinished(FinishedJob(id: "j0", state: "completed", resultJSON: "{}", finishedAt: now))
            journal.appendFinished(FinishedJob(id: "j1", state: "completed", resultJSON: "{}", finishedAt: now + 3_000))
            try journal.commit()
            #expect(journal.nextExpiry == now + 10_000)
            now += 10_001
            try journal.compactIfNeeded()
            #expect(journal.stats.retainedFinished == 1 && journal.nextExpiry == now - 10_001 + 13_000)
            now += 3_000
            try journal.compactIfNeeded()
            #expect(journal.stats.retainedFinished == 0 && journal.nextExpiry == nil)
        }
    }

    @Test func anOversizedSubmitFailsItsCommitWithoutIO() throws {
        try withDirectory { dir in
            let journal = try JobJournal(directory: dir, fsync: false, retentionSeconds: 60)
            var huge = sampleJob(1)
            huge.args = [String(decoding: [UInt8](repeating: 0x78, count: JournalRecord.maxPayloadBytes), as: UTF8.self)]
            journal.appendSubmitted(sampleJob(0))
            journal.appendSubmitted(huge)
            #expect(throws: JournalError.recordTooLarge(id: "j1", bytes: JournalRecord.maxPayloadBytes + 81)) {
                try journal.commit()
            }
            #expect(!journal.hasUncommitted && journal.stats.fileBytes == JournalRecord.fileHeader.count)
        }
    }

    /// Disk full: a real kernel refusal, EFBIG from
    /// RLIMIT_FSIZE, in a child process so the limit touches no other test.
    @Test func diskFullRollsBackAndRecoversOnceSpaceReturns() async {
        await #expect(processExitsWith: .exitCode(0)) {
            signal(SIGXFSZ, SIG_IGN)  // write(2) then fails with EFBIG instead of killing us
            var failedCheck: Int32 = 99
            withDirectory { dir in failedCheck = (try? diskFullChecks(dir)) ?? 99 }
            exit(failedCheck)
        }
    }

    /// Durable submits/s with group commit, one commit per `batch` submits:
    /// the median of 3 one-second runs [best], and CPU µs per submit (the
    /// journal's own cost, which a loaded disk does not distort).
    /// `LOOPD_JOURNAL_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter JournalTests/benchmark`
    @Test(.enabled(if: getenv("LOOPD_JOURNAL_BENCH") != nil)) func benchmark() throws {
        print("journal bench: raw 100-byte pwrite+fdatasync: \(try rawSyncsPerSecond())/s")
        let jobs = (0..<65_536).map { sampleJob($0) }  // built up front: measure the journal, not the test
        for (fsync, batch) in [(true, 1), (true, 16), (true, 64), (true, 256), (false, 64)] {
            var rates: [Double] = []
            var cpuMicros: [Double] = []
            for _ in 0..<3 {
                try withDirectory { dir in
                    let journal = try JobJournal(directory: dir, fsync: fsync, retentionSeconds: 60)
                    let (start, cpuStart) = (seconds(CLOCK_MONOTONIC), seconds(CLOCK_PROCESS_CPUTIME_ID))
                    var submitted = 0
                    while seconds(CLOCK_MONOTONIC) - start < 1 {
                        for _ in 0..<batch {
                            journal.appendSubmitted(jobs[submitted & 65_535])
                            submitted += 1
                        }
                        try journal.commit()
                    }
                    rates.append(Double(submitted) / (seconds(CLOCK_MONOTONIC) - start))
                    cpuMicros.append((seconds(CLOCK_PROCESS_CPUTIME_ID) - cpuStart) * 1e6 / Double(submitted))
                }
            }
            rates.sort()
            cpuMicros.sort()
            print("journal bench: fsync=\(fsync) batch=\(batch): \(Int(rates[1])) [\(Int(rates[2]))] durable submits/s,"
                  + " \(Int(cpuMicros[1] * 100) / 100) CPU µs/submit")
        }
    }
}

/// Runs in the exit test's child: commit, fill the "disk", fail, recover.
/// Returns 0 on success, else the number of the check that failed.
private func diskFullChecks(_ dir: String) throws(JournalError) -> Int32 {
    let journal = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60)
    for i in 0..<10 { journal.appendSubmitted(sampleJob(i)) }
    try journal.commit()
    let committed = journal.stats.fileBytes
    var limit = rlimit(rlim_cur: rlim_t(committed + 100), rlim_max: rlim_t.max)
    guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { return 1 }
    for i in 10..<30 { journal.appendSubmitted(sampleJob(i)) }  // ~1.7 kB: the write stops part-way
    journal.appendFinished(FinishedJob(id: "j0", state: "completed", resultJSON: "{}",
                                       finishedAt: JobJournal.unixMilliseconds()))
    do {
        try journal.commit()
        return 2
    } catch {
        guard error == .unavailable(errno: EFBIG, path: journal.path) else { return 3 }
    }
    // Cut back to the committed length; the finish record is kept for the next commit.
    guard try readFile(journal.path).count == committed, journal.stats.failedCommits == 1,
          journal.hasUncommitted else { return 4 }
    limit.rlim_cur = rlim_t.max  // space returns
    guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { return 5 }
    journal.appendSubmitted(sampleJob(99))
    try journal.commit()
    let reopened = try JobJournal(directory: dir, fsync: true, retentionSeconds: 60)
    guard reopened.pendingJobs() == (1..<10).map({ sampleJob($0) }) + [sampleJob(99)] else { return 6 }
    guard reopened.recovered.truncatedBytes == 0, reopened.finishedStatus(id: "j0") != nil else { return 7 }
    return 0
}

private func sampleJob(_ i: Int) -> DurableJob {
    DurableJob(id: "j\(i)", action: i % 2 == 0 ? "echo" : "sleep", args: i % 3 == 0 ? [] : ["a\(i)", "ü ∂"],
               placement: ["any", "worker:w1", "key:k\(i)"][i % 3], delayMs: Int64(i),
               timeoutMs: i % 2 == 0 ? nil : 500, mode: i % 4 == 1 ? "maintenance" : nil,
               submittedAt: 1_700_000_000_000 + Int64(i), clientUID: UInt32(1000 + i))
}

private func readFile(_ path: String) throws(JournalError) -> [UInt8] {
    let file = try JournalFile.open(path, create: false)
    return try file.read(at: 0, count: try file.size())
}

private func writeFile(_ path: String, _ bytes: [UInt8]) throws(JournalError) {
    try JournalFile.open(path, create: true, truncate: true).write(bytes, at: 0)
}

/// The disk's own ceiling: one small append, synced, per call.
private func rawSyncsPerSecond() throws -> Int {
    var syncs = 0
    try withDirectory { dir in
        let (file, start) = (try JournalFile.open(dir + "/raw", create: true), seconds(CLOCK_MONOTONIC))
        while seconds(CLOCK_MONOTONIC) - start < 1 {
            try file.write([UInt8](repeating: 7, count: 100), at: syncs * 100)
            try file.sync()
            syncs += 1
        }
    }
    return syncs
}

private func seconds(_ clock: clockid_t) -> Double {
    var now = timespec()
    clock_gettime(clock, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Runs `body` with a fresh directory under /tmp, removed afterwards with
/// everything in it (the journal's files are all at its top level).
private func withDirectory<E: Error>(_ body: (String) throws(E) -> Void) throws(E) {
    var template = Array("/tmp/loopd-journal-XXXXXX".utf8CString)
    let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    defer {
        if let stream = opendir(dir) {
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink(dir + "/" + name) }
            }
            closedir(stream)
        }
        rmdir(dir)
    }
    try body(dir)
}
