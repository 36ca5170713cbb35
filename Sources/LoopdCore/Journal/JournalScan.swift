/// Reads a journal file's bytes from the header to the first record that
/// fails validation, and says what kind of damage stopped it. Pure: no I/O,
/// so tests can feed it any damage directly.
///
/// What counts as the end of the log: the first record whose frame runs
/// past the end of the file, whose length is absurd, whose checksum does not
/// match, or whose checksummed payload does not parse. Nothing after it is
/// read as part of the log: once one length field is wrong the next record
/// boundary is unknown.
///
/// What the damage is, decides what start-up does (`JobJournal.init`):
///
/// - **A torn tail**: no intact record anywhere after the bad one. A crash
///   in the middle of a commit leaves exactly this (a cut-off write, zeros,
///   garbage), and since each commit is fsynced before anything it holds is
///   acknowledged, nothing promised lies there: it is cut off.
/// - **An unwritten block**: the bad record starts with a zero-filled frame
///   header, yet intact records follow: the blocks of a commit in flight
///   reached the disk out of order. Nothing after it was acknowledged
///   either; the bytes are cut off and kept in a side file.
/// - **Corruption**: anything else with an intact record after it: bytes
///   that were committed (and so acknowledged) have changed. Start-up
///   refuses the file with its path and the byte offset; an operator
///   salvages it (`JournalSalvage`, `loopd --salvage-journal`).
struct JournalScan {
    /// Every good record in file order, with its size on disk.
    var records: [(record: JournalRecord, size: Int)] = []
    /// Offset just past the last good record: the log is cut here and
    /// appends resume here.
    var validEnd: Int
    /// What stopped the scan before the end of the file; nil when every
    /// byte was read as records.
    var damage: Damage?

    /// What is wrong at `validEnd`.
    struct Damage: Equatable {
        /// Why the record at `validEnd` was not read.
        var reason: String
        /// Where the first intact record after it starts; nil for a torn tail.
        var nextIntactRecord: Int?
        /// Whether the bad record's frame header is all zeros.
        var zeroFilled: Bool

        /// A torn tail or an unwritten block: what a crash can leave.
        var isCrashShaped: Bool { nextIntactRecord == nil || zeroFilled }
    }

    /// Scans `bytes`, a whole journal file read from `path` (named in errors).
    /// Throws `.corrupt` only when the file header is not ours: the file may
    /// be something else entirely and must not be truncated.
    init(_ bytes: [UInt8], path: String) throws(JournalError) {
        var records: [(record: JournalRecord, size: Int)] = []
        (validEnd, damage) = try Self.scan(bytes, path: path) { records.append(($0, $1)) }
        self.records = records
    }

    /// Scans `bytes` as `init` does, handing each good record and its size
    /// to `each` in file order instead of keeping them (a recovery applies
    /// them as they come). Returns where the log ends and what stopped it.
    static func scan(_ bytes: [UInt8], path: String,
                     each: (JournalRecord, Int) -> Void) throws(JournalError) -> (validEnd: Int, damage: Damage?) {
        try checkHeader(bytes, path: path)
        let all = bytes[...]
        var offset = JournalRecord.fileHeader.count
        while offset < bytes.count {
            switch frame(all, at: offset) {
            case .intact(let record, let size):
                each(record, size)
                offset += size
            case .bad(let reason):
                let damage = Damage(reason: reason, nextIntactRecord: nextIntactRecord(all, after: offset),
                                    zeroFilled: all[offset..<min(offset + JournalRecord.headerBytes, bytes.count)].allSatisfy { $0 == 0 })
                return (offset, damage)
            }
        }
        return (offset, nil)
    }

    /// How many frames of record type `type` the log seems to hold: a walk
    /// over the frame headers alone (no checksum, no parse), stopping at the
    /// first implausible one. A recovery sizes its tables with it.
    static func countFrames(_ bytes: [UInt8], type: UInt8) -> Int {
        var offset = JournalRecord.fileHeader.count, n = 0
        while bytes.count - offset >= JournalRecord.headerBytes {
            let length = Int(ByteReader.u32(bytes[...], at: offset))
            guard length <= JournalRecord.maxPayloadBytes else { break }
            if bytes[offset + 8] == type { n += 1 }
            offset += JournalRecord.headerBytes + length
        }
        return n
    }

    static func checkHeader(_ bytes: [UInt8], path: String) throws(JournalError) {
        let header = JournalRecord.fileHeader
        guard bytes.count >= header.count, bytes[..<header.count].elementsEqual(header) else {
            throw .corrupt(path: path, offset: 0, reason: "not a loopd journal (bad header)")
        }
    }

    /// One record frame at `offset`.
    enum Frame {
        case intact(JournalRecord, size: Int)
        case bad(String)
    }

    /// Reads the frame at `offset`: intact, or why not.
    static func frame(_ all: ArraySlice<UInt8>, at offset: Int) -> Frame {
        let count = all.endIndex
        guard count - offset >= JournalRecord.headerBytes else {
            return .bad("a record header cut short by the end of the file")
        }
        let length = Int(ByteReader.u32(all, at: offset))
        guard length <= JournalRecord.maxPayloadBytes else {
            return .bad("a record length of \(length) bytes, over the \(JournalRecord.maxPayloadBytes)-byte limit")
        }
        let end = offset + JournalRecord.headerBytes + length
        guard end <= count else { return .bad("a \(length)-byte record that runs past the end of the file") }
        var crc = CRC32C.checksum(all[offset..<offset + 4])
        crc = CRC32C.checksum(all[(offset + 8)..<end], continuing: crc)
        guard crc == ByteReader.u32(all, at: offset + 4) else {
            return .bad("the checksum of a \(length)-byte record does not match")
        }
        guard let record = JournalRecord.decode(type: all[offset + 8], payload: all[(offset + JournalRecord.headerBytes)..<end]) else {
            return .bad("a \(length)-byte record with a good checksum does not parse (type \(all[offset + 8]))")
        }
        return .intact(record, size: end - offset)
    }

    /// The offset of the first intact record that starts after `offset`,
    /// trying every byte (a damaged length hides the next boundary). Cheap
    /// checks first: the type byte and the length must be plausible before
    /// a checksum is computed. Only runs on a damaged file.
    static func nextIntactRecord(_ all: ArraySlice<UInt8>, after offset: Int) -> Int? {
        let count = all.endIndex
        var at = offset + 1
        while at + JournalRecord.headerBytes <= count {
            let type = all[at + 8]
            if type == 1 || type == 2 {
                let length = Int(ByteReader.u32(all, at: at))
                if length > 0, length <= JournalRecord.maxPayloadBytes, at + JournalRecord.headerBytes + length <= count,
                   case .intact = frame(all, at: at) {
                    return at
                }
            }
            at += 1
        }
        return nil
    }
}
