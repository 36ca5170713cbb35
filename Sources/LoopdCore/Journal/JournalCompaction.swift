/// Compaction: rewriting the log as just its live records.
///
/// Crash safety, step by step (`<log>` is journal.log, `<new>` journal.log.compact):
/// 1. write the live records to `<new>` (created with `O_TRUNC`) and fsync it.
///    A crash here leaves `<log>` untouched; `init` deletes the stray `<new>`.
/// 2. `rename(<new>, <log>)`: atomic, so the name refers to one whole file or
///    the other, never a mix. Both replay to the same pending jobs and the
///    same retained finishes (the old one only has extra dead records), so
///    a crash on either side of the rename loses nothing.
/// 3. switch the open descriptor to the new file, *then* fsync the
///    directory. Switching first means no commit can ever land in the old,
///    now unlinked, inode. Until the directory fsync succeeds a crash could
///    bring the old file back, so every commit retries it first and
///    acknowledges nothing written to the new file until it succeeds
///    (`directorySyncPending`).
///
/// Records appended but not yet committed are not part of the snapshot;
/// they stay buffered and the next commit appends them to the new file.
extension JobJournal {
    /// Compacts when the log is at least `compactionThresholdBytes` long and
    /// most of it is dead: live records (pending submits and finishes inside
    /// retention) fill less than half of it. Submit records whose finish is
    /// committed, and finishes past retention, are dead. Expires finished
    /// jobs past retention from memory first, whether or not it compacts.
    /// Cheap enough to call every loop pass.
    public func compactIfNeeded() throws(JournalError) {
        state.expire(finishedBefore: clock() - retentionMs, failuresBefore: clock() - failureRetentionMs)
        let logBytes = committedEnd - JournalRecord.fileHeader.count
        guard committedEnd >= compactionThresholdBytes, state.liveBytes * 2 < logBytes else { return }
        try compact()
    }

    /// Rewrites the log as its live records now, whatever its size. On a
    /// failure before the rename the old log stays in use, unchanged.
    func compact() throws(JournalError) {
        state.expire(finishedBefore: clock() - retentionMs, failuresBefore: clock() - failureRetentionMs)
        var bytes = JournalRecord.fileHeader
        bytes.reserveCapacity(bytes.count + state.liveBytes)
        // Re-encoding cannot hit `.recordTooLarge`: each record was encoded
        // once already to be committed.
        for job in state.pendingJobs() { try JournalRecord.submitted(job).encode(into: &bytes) }
        for job in state.finishedJobs() { try JournalRecord.finished(job).encode(into: &bytes) }

        let snapshot = try Self.writeSnapshot(bytes, path: path, fsync: fsyncEnabled)
        // Step 3: the rename is done, the name is the new file's; follow it at once.
        file = snapshot
        committedEnd = bytes.count
        tailDirty = false
        counters.compactions += 1
        counters.writtenBytes += bytes.count
        if fsyncEnabled {
            directorySyncPending = true
            try JournalFile.syncDirectory(directory)
            directorySyncPending = false
        }
    }

    /// Steps 1 and 2: writes `bytes` as `<path>.compact`, syncs it (when
    /// `fsync`), and renames it over `path`. Returns the new file, open.
    /// Also how a fresh log is created, so even a new file is never seen
    /// half-written. The caller syncs the directory.
    static func writeSnapshot(_ bytes: [UInt8], path: String, fsync: Bool) throws(JournalError) -> JournalFile {
        let temporary = path + ".compact"
        let snapshot = try JournalFile.open(temporary, create: true, truncate: true)
        do {
            try snapshot.write(bytes, at: 0)
            if fsync { try snapshot.sync() }
            try JournalFile.rename(temporary, over: path)
        } catch {
            try? JournalFile.removeIfPresent(temporary)
            throw error
        }
        return snapshot
    }
}
