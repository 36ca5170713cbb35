/// `loopd --salvage-journal PATH`: makes a damaged journal readable again,
/// keeping every intact record, for when start-up refused it as corrupt
/// (`JournalScan`). Run with loopd stopped: it rewrites the file.
///
/// It reads the file record by record; at each bad record it looks for the
/// next intact one (a damaged length hides the next boundary, so it tries
/// every byte, trusting only a record whose checksum and payload are good)
/// and goes on from there. The intact records, in file order, become the
/// new journal; the file as it was is first saved, fsynced, as
/// `PATH.corrupt-<unix ms>`. What the damaged bytes held is lost: a job
/// submitted there is not replayed, and a job whose end was recorded there
/// runs again (durable jobs are at-least-once).
public enum JournalSalvage {
    /// What a salvage found and did.
    public struct Report: Sendable, Equatable {
        /// Intact records kept, and their bytes (the file header not counted).
        public var keptRecords = 0
        public var keptBytes = 0
        /// Each damaged stretch: where it starts, how long it is, why its
        /// first record was not read.
        public var damaged: [(offset: Int, bytes: Int, reason: String)] = []
        /// Where the file as it was is saved; nil when there was no damage
        /// and nothing was written.
        public var savedAs: String?

        public static func == (a: Report, b: Report) -> Bool {
            a.keptRecords == b.keptRecords && a.keptBytes == b.keptBytes && a.savedAs == b.savedAs
                && a.damaged.elementsEqual(b.damaged) { $0 == $1 }
        }

        /// What to print for the operator, one line per fact.
        public func lines(path: String) -> [String] {
            guard let savedAs else { return ["\(path): no damage; \(keptRecords) records, nothing to do"] }
            var lines = damaged.map { "\(path): \($0.bytes) damaged bytes at byte \($0.offset): \($0.reason)" }
            lines.append("\(path): kept \(keptRecords) intact records (\(keptBytes) bytes); the file as it was is saved as \(savedAs)")
            return lines
        }
    }

    /// Salvages the journal at `path` (see the type). Throws `.corrupt`
    /// for a file that is not a loopd journal (left alone), and
    /// `.unavailable` when it cannot be read or written.
    public static func salvage(path: String, fsync: Bool = true,
                               clock: () -> Int64 = { JobJournal.unixMilliseconds() }) throws(JournalError) -> Report {
        let file = try JournalFile.open(path, create: false)
        let bytes = try file.read(at: 0, count: try file.size())
        try JournalScan.checkHeader(bytes, path: path)
        let all = bytes[...]
        var out = JournalRecord.fileHeader
        var report = Report()
        var offset = out.count
        while offset < bytes.count {
            switch JournalScan.frame(all, at: offset) {
            case .intact(_, let size):
                out += all[offset..<offset + size]
                report.keptRecords += 1
                report.keptBytes += size
                offset += size
            case .bad(let reason):
                let next = JournalScan.nextIntactRecord(all, after: offset) ?? bytes.count
                report.damaged.append((offset, next - offset, reason))
                offset = next
            }
        }
        guard !report.damaged.isEmpty else { return report }

        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let saved = path + ".corrupt-\(clock())"
        let copy = try JournalFile.open(saved, create: true, truncate: true)
        try copy.write(bytes, at: 0)
        if fsync { try copy.sync() }
        let temporary = path + ".salvage"
        let fresh = try JournalFile.open(temporary, create: true, truncate: true)
        try fresh.write(out, at: 0)
        if fsync { try fresh.sync() }
        try JournalFile.rename(temporary, over: path)
        if fsync { try JournalFile.syncDirectory(directory.isEmpty ? "/" : directory) }
        report.savedAs = saved
        return report
    }
}
