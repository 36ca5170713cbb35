import LoopPlatform

/// The durable-job journal: an append-only, checksummed log in
/// `<directory>/journal.log` (format: `JournalRecord`), group-committed.
///
/// How the daemon uses it, all on the main loop thread:
/// 1. `init` once at start; queue every job `forEachPendingJob` names again.
/// 2. For a durable submit, `appendSubmitted` (buffers, no I/O) and hold the
///    acknowledgement. When a durable job ends, `appendFinished`.
/// 3. From a `.beforeWaiting` observer, once per loop pass: `commit()`. If it
///    returns, acknowledge every submit appended since the previous commit;
///    if it throws, answer each of them `journal_unavailable` instead (their
///    submit records were discarded, so they will not be replayed either).
///    Then `compactIfNeeded()`.
///
/// Durability: `commit` issues one `pwrite` of everything buffered, then one
/// `fdatasync`, before it returns. After a crash, every byte up to the end
/// of the last commit that returned is intact; bytes of a commit in flight
/// may be missing, zeroed or partial, and `init` reads the log only up to the
/// last whole, checksummed record. Nothing is acknowledged before its commit
/// returns, so every acknowledged job is inside what `init` keeps.
///
/// Concurrency: not thread-safe and not `Sendable`. Only the thread that
/// runs the daemon's main loop may touch it; no locks are needed because
/// nothing else does.
public final class JobJournal {
    /// The state directory holding the log.
    public let directory: String
    /// `<directory>/journal.log`.
    public let path: String
    /// What `init` found on disk.
    public private(set) var recovered: JournalRecovery

    let fsyncEnabled: Bool
    let retentionMs: Int64
    /// How long failures are retained: `retentionMs` or longer.
    let failureRetentionMs: Int64
    let compactionThresholdBytes: Int
    let clock: () -> Int64

    /// The open log; replaced by compaction. Loop thread only.
    var file: JournalFile
    /// Length of the log that is committed (written and synced). Appends go here.
    var committedEnd: Int
    /// A failed commit may have left bytes past `committedEnd` that could not
    /// be cut yet; the next commit cuts them before writing.
    var tailDirty = false
    /// A compaction's rename is not yet known to be durable; commits retry
    /// the directory fsync before acknowledging anything written to the new file.
    var directorySyncPending = false
    /// Committed live state (see `JournalState`).
    @exclusivity(unchecked) var state = JournalState()
    var counters = JournalStats()
    /// Told how long each commit's `fdatasync` took, in nanoseconds (the
    /// daemon's metrics). Loop thread only, like every call here.
    public var syncTimed: ((_ nanoseconds: UInt64) -> Void)?

    /// Encoded records appended since the last commit, back to back.
    private var buffer: [UInt8] = []
    /// The records in `buffer` and where each one's bytes are.
    private var buffered: [(record: JournalRecord, bytes: Range<Int>)] = []
    /// A submit appended since the last commit that was too large to encode.
    private var oversizedSubmit: (id: String, bytes: Int)?

    /// Opens (creating `directory` with mode 0700 and the log if needed) and
    /// recovers the journal.
    ///
    /// - A torn tail (a crash mid-commit: no intact record after the bad
    ///   one) is cut off; the count of cut bytes is in
    ///   `recovered.truncatedBytes`, where and why in `recovered.damagedAt`
    ///   and `recovered.damage`.
    /// - Blocks of a commit in flight that never reached the disk (a
    ///   zero-filled record, intact ones after it) end the log too; the cut
    ///   bytes are first saved, fsynced, to `recovered.corruptTailPath`.
    /// - Any other bad record with an intact record after it is corruption
    ///   of committed data: it throws `.corrupt` with the file and the byte
    ///   offset, and leaves the file alone (see `JournalScan`). An operator
    ///   salvages it with `loopd --salvage-journal` (`JournalSalvage`).
    /// - A file whose header is not ours throws `.corrupt` and is left alone.
    ///
    /// - Parameters:
    ///   - fsync: sync each commit; off only for tests and benchmarks.
    ///   - retentionSeconds: how long finished jobs stay queryable.
    ///   - failureRetentionSeconds: how long failures (failed, timed out,
    ///     expired) stay queryable, if longer (`limits.retention_failed_seconds`).
    ///   - compactionThresholdBytes: the log is never compacted below this size.
    ///   - retainedByteLimit: `limits.max_retained_bytes`: the estimated
    ///     memory finished jobs may hold; past it the oldest are forgotten.
    ///   - clock: Unix milliseconds; injected by tests.
    public init(
        directory: String, fsync: Bool = true, retentionSeconds: Int64, failureRetentionSeconds: Int64 = 0,
        compactionThresholdBytes: Int = 8 << 20, retainedByteLimit: Int = .max,
        clock: @escaping () -> Int64 = { JobJournal.unixMilliseconds() }
    ) throws(JournalError) {
        precondition(retentionSeconds >= 0, "journal retention must not be negative")
        self.directory = directory
        path = directory + "/journal.log"
        fsyncEnabled = fsync
        retentionMs = retentionSeconds * 1000
        failureRetentionMs = max(retentionSeconds, failureRetentionSeconds) * 1000
        self.compactionThresholdBytes = compactionThresholdBytes
        self.clock = clock

        try JournalFile.makeDirectories(directory, sync: fsync)
        // A compaction that crashed before its rename left this half-built
        // copy; the log itself is still authoritative.
        try JournalFile.removeIfPresent(path + ".compact")
        let isEmpty = JournalFile.exists(path) ? try JournalFile.open(path, create: false).size() == 0 : true
        if isEmpty {
            _ = try Self.writeSnapshot(JournalRecord.fileHeader, path: path, fsync: fsync)
            if fsync { try JournalFile.syncDirectory(directory) }
        }
        let log = try JournalFile.open(path, create: false)
        let bytes = try log.read(at: 0, count: try log.size())
        // The records are applied as the scan reads them, into tables sized
        // for the submits beforehand: a journal of a million pending jobs
        // is neither kept twice nor grown step by step.
        var live = JournalState(retainedByteLimit: retainedByteLimit)
        live.reservePending(JournalScan.countFrames(bytes, type: JournalRecord.submittedType))
        let scan = try JournalScan.scan(bytes, path: path) { live.apply($0, size: $1) }

        var recovery = JournalRecovery()
        if let damage = scan.damage {
            guard damage.isCrashShaped else {
                throw .corrupt(path: path, offset: scan.validEnd, reason: Self.corruptionReason(damage, path: path))
            }
            recovery.truncatedBytes = bytes.count - scan.validEnd
            recovery.damagedAt = scan.validEnd
            recovery.damage = damage.reason
            if damage.nextIntactRecord != nil {
                let side = path + ".corrupt-\(clock())"
                let sideFile = try JournalFile.open(side, create: true, truncate: true)
                try sideFile.write(Array(bytes[scan.validEnd...]), at: 0)
                if fsync { try sideFile.sync() }
                if fsync { try JournalFile.syncDirectory(directory) }
                recovery.corruptTailPath = side
            }
            try log.truncate(to: scan.validEnd)
            if fsync { try log.sync() }
        }
        live.expire(finishedBefore: clock() - retentionMs, failuresBefore: clock() - failureRetentionMs)
        recovery.finished = live.finishedJobs()
        file = log
        committedEnd = scan.validEnd
        state = live
        recovered = recovery
    }

    /// Acknowledged jobs with no finish record, in submission order: at
    /// start, what to queue again (at-least-once: one may have run before
    /// a crash). Read in place: a journal of a million pending jobs is not
    /// copied to be replayed. `body` must not commit the journal.
    public func forEachPendingJob(_ body: (DurableJob) -> Void) {
        state.forEachPending(body)
    }

    /// The pending jobs (see `forEachPendingJob`), as an array.
    public func pendingJobs() -> [DurableJob] {
        state.pendingJobs()
    }

    /// How many jobs are pending.
    public var pendingCount: Int { state.pendingCount }

    /// Drops the recovered finished jobs once the unique-key index has
    /// them: what else `recovered` says is kept.
    public func releaseRecoveredJobs() {
        recovered.finished = []
    }

    /// The message of a refused start: what is wrong, where, and how to
    /// get going again.
    static func corruptionReason(_ damage: JournalScan.Damage, path: String) -> String {
        "\(damage.reason), and an intact record follows at byte \(damage.nextIntactRecord ?? 0), so data that was "
            + "committed has changed: not a torn write from a crash. loopd does not start on it; stop it and run "
            + "`loopd --salvage-journal \(path)` to keep every intact record (the file as it was is saved beside it), "
            + "see docs/OPERATIONS.md, \"A damaged journal\""
    }

    /// Buffers the submit record of `job`; no I/O. The job is durable, and
    /// may be acknowledged, once the next `commit()` returns. A record over
    /// `JournalRecord.maxPayloadBytes` makes that commit throw `.recordTooLarge`.
    public func appendSubmitted(_ job: DurableJob) {
        do {
            try append(.submitted(job))
        } catch {
            if oversizedSubmit == nil, case let .recordTooLarge(id, bytes) = error {
                oversizedSubmit = (id, bytes)
            }
        }
    }

    /// Buffers the finish record of `job`; no I/O. Unlike submits, finish
    /// records survive a failed commit and are retried by the next one:
    /// losing one only means the job would run again after a crash. A result
    /// too large for a record is replaced by a short JSON note saying so.
    public func appendFinished(_ job: FinishedJob) {
        do {
            try append(.finished(job))
        } catch {
            var stub = job
            stub.resultJSON = #"{"journal_error":"result of \#(job.resultJSON.utf8.count) bytes too large to journal"}"#
            try? append(.finished(stub))
        }
    }

    /// Buffers the record that forgets the ended job `id` before its
    /// retention ends (`discard`); no I/O. Like a finish, it survives a
    /// failed commit.
    public func appendDiscarded(_ id: String) {
        try? append(.discarded(id: id))
    }

    private func append(_ record: JournalRecord) throws(JournalError) {
        let start = buffer.count
        let size = try record.encode(into: &buffer)
        buffered.append((record, start..<start + size))
    }

    /// Whether records are waiting for `commit()`.
    public var hasUncommitted: Bool { !buffered.isEmpty || oversizedSubmit != nil }

    /// Makes everything appended since the last commit durable with one
    /// `pwrite` and one `fdatasync`. Does nothing when nothing was appended.
    ///
    /// On failure (disk full, I/O error) it throws `.unavailable`, drops the
    /// buffered submit records (keeping finish records, see `appendFinished`),
    /// and cuts the file back to the last committed length so no partial
    /// record is ever followed by good ones. The journal stays usable: a
    /// later commit succeeds once space returns.
    public func commit() throws(JournalError) {
        guard hasUncommitted else { return }
        if let (id, bytes) = oversizedSubmit {
            rollBack(truncating: false)
            throw .recordTooLarge(id: id, bytes: bytes)
        }
        do {
            if directorySyncPending {
                try JournalFile.syncDirectory(directory)
                directorySyncPending = false
            }
            if tailDirty {
                try file.truncate(to: committedEnd)
                tailDirty = false
            }
            counters.writeCalls += try file.write(buffer, at: committedEnd)
            counters.writtenBytes += buffer.count
            if fsyncEnabled {
                counters.syncCalls += 1
                let started = monotonicNanoseconds()
                try file.sync()
                syncTimed?(monotonicNanoseconds() &- started)
            }
        } catch {
            rollBack(truncating: true)
            throw error
        }
        committedEnd += buffer.count
        for (record, bytes) in buffered { state.apply(record, size: bytes.count) }
        counters.commits += 1
        counters.records += buffered.count
        buffer.removeAll(keepingCapacity: true)
        buffered.removeAll(keepingCapacity: true)
    }

    /// Undoes a failed commit's effect on the file, best effort: if the cut
    /// (or its sync) fails too, `tailDirty` makes the next commit redo it
    /// before writing, and that commit's own sync makes the cut durable.
    /// (Shrinking a file needs no space, so only EIO can stop the cut; a
    /// crash in that window may replay whole records of the failed batch:
    /// jobs that were refused might run, but none that was accepted is lost.)
    private func rollBack(truncating: Bool) {
        counters.failedCommits += 1
        oversizedSubmit = nil
        if truncating {
            tailDirty = true
            if (try? file.truncate(to: committedEnd)) != nil, !fsyncEnabled || (try? file.sync()) != nil {
                tailDirty = false
            }
        }
        var kept: [UInt8] = []
        var keptRecords: [(record: JournalRecord, bytes: Range<Int>)] = []
        for (record, bytes) in buffered {
            if case .submitted = record { continue }
            keptRecords.append((record, kept.count..<kept.count + bytes.count))
            kept += buffer[bytes]
        }
        buffer = kept
        buffered = keptRecords
    }

    /// The retained, committed finish of durable job `id`; nil if unknown,
    /// not yet committed, or past retention.
    public func finishedStatus(id: String) -> FinishedJob? {
        guard let job = state.finishedJob(id),
              job.finishedAt >= clock() - (job.isFailure ? failureRetentionMs : retentionMs) else { return nil }
        return job
    }

    /// Whether `finishedStatus(id:)` would find `id`: without a copy of
    /// the finish, and without hashing `id` while none is retained (a
    /// daemon whose jobs are not durable asks this of every new job id).
    public func hasFinished(id: String) -> Bool {
        !state.retainsNoFinish && finishedStatus(id: id) != nil
    }

    /// The retained, committed finishes, in the order they finished.
    public func finishedJobs() -> [FinishedJob] {
        state.finishedJobs()
    }

    /// `limits.max_retained_bytes` for the retained finishes (a reload may
    /// change it; the next finish applies it).
    public var retainedByteLimit: Int {
        get { state.retainedByteLimit }
        set { state.retainedByteLimit = newValue }
    }

    /// The estimated memory the retained finishes of `uid`'s durable jobs
    /// hold (`quotas.max_durable_retained_bytes`).
    public func retainedFinishedBytes(of uid: UInt32) -> Int {
        state.retainedMemory(of: uid)
    }

    /// When (Unix ms, by the journal's clock) the oldest retained finish
    /// passes retention; nil while none is retained. Commits expire retained
    /// finishes as they go; an idle daemon calls `compactIfNeeded()` at this
    /// time so their memory is not held until the next durable job.
    public var nextExpiry: Int64? {
        state.nextExpiry(retentionMs: retentionMs, failureRetentionMs: failureRetentionMs)
    }

    /// Counters and sizes; see `JournalStats`.
    public var stats: JournalStats {
        var stats = counters
        stats.fileBytes = committedEnd
        stats.liveJobs = state.pendingCount
        stats.retainedFinished = state.finishedCount
        stats.retainedFinishedBytes = state.retainedMemory
        return stats
    }

    /// The current wall-clock time in Unix milliseconds (the default clock).
    public static func unixMilliseconds() -> Int64 {
        LoopPlatform.unixMilliseconds()
    }
}
