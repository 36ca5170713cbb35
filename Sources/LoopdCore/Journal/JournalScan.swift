/// Reads a journal file's bytes from the header to the first record that
/// fails validation. Pure: no I/O, so tests can feed it any damage directly.
///
/// What counts as the end of the log: the first record whose frame runs
/// past the end of the file, whose length is absurd, whose checksum does not
/// match, or whose checksummed payload does not parse. Nothing after it is
/// trusted. Once one length field is wrong the next record boundary is
/// unknown, and guessing it by hunting for a plausible checksum could revive
/// a stale or half-written job; replaying a job that was never acknowledged
/// is worse than reporting the loss. Because the log is append-only and each
/// commit is fsynced before anything is acknowledged, a crash can only damage
/// the unacknowledged end, so in the crash case this loses nothing that was
/// promised. Damage followed by more data (a bad sector, a stray write) is
/// reported by `JobJournal`, which keeps the cut bytes in a side file.
struct JournalScan {
    /// Every good record in file order, with its size on disk.
    var records: [(record: JournalRecord, size: Int)] = []
    /// Offset just past the last good record: the log is cut here and
    /// appends resume here.
    var validEnd: Int
    /// Whether the bytes past `validEnd` are explained by one torn write (the
    /// bad frame reaches the end of the file, or only zeros follow) rather
    /// than damage with data after it.
    var tornTailOnly = true

    /// Scans `bytes`, a whole journal file read from `path` (named in errors).
    /// Throws `.corrupt` only when the file header is not ours: the file may
    /// be something else entirely and must not be truncated.
    init(_ bytes: [UInt8], path: String) throws(JournalError) {
        let header = JournalRecord.fileHeader
        guard bytes.count >= header.count, bytes[..<header.count].elementsEqual(header) else {
            throw .corrupt(path: path, offset: 0, reason: "not a loopd journal (bad header)")
        }
        validEnd = header.count
        let all = bytes[...]
        var offset = header.count
        while offset < bytes.count {
            guard bytes.count - offset >= JournalRecord.headerBytes else { break }  // torn frame header
            let length = Int(ByteReader.u32(all, at: offset))
            guard length <= JournalRecord.maxPayloadBytes else {
                tornTailOnly = false
                break
            }
            let end = offset + JournalRecord.headerBytes + length
            guard end <= bytes.count else { break }  // the write was cut short
            var crc = CRC32C.checksum(all[offset..<offset + 4])
            crc = CRC32C.checksum(all[(offset + 8)..<end], continuing: crc)
            let payload = all[(offset + JournalRecord.headerBytes)..<end]
            guard crc == ByteReader.u32(all, at: offset + 4),
                  let record = JournalRecord.decode(type: bytes[offset + 8], payload: payload) else {
                tornTailOnly = end == bytes.count || all[offset...].allSatisfy { $0 == 0 }
                break
            }
            records.append((record, end - offset))
            offset = end
            validEnd = end
        }
    }
}
