import LoopPlatform
import CSystemd
import Logging

/// A log handler that takes loopd's records as they are (a level, the text
/// and a few fields) without swift-log's metadata dictionary in between.
/// loopd's own two handlers adopt it, so the record written at every job's
/// end costs one formatted line or one journal entry and little more; any
/// other handler is reached through swift-log as before.
///
/// What a handler writes this way is byte for byte what its
/// `log(event:)` writes for the same record.
protocol DirectLogHandler: LogHandler {
    /// Writes one record. The keys of `fields` are distinct; `id` becomes
    /// the MESSAGE_ID field.
    func writeRecord(level: Logger.Level, message: String, fields: [(LogField, String)], id: MessageID?,
               file: String, function: String, line: UInt)
    /// Writes the record of a job's end (a default writes it as any record).
    func writeJobEnd(_ record: JobEndRecord, file: String, function: String, line: UInt)
    /// Holds the record of a job's end until `flushHeld()`; returns whether
    /// nothing was held before, so the caller arranges that flush. Every
    /// other record written meanwhile writes the held ones first. A handler
    /// that cannot hold (the default) writes at once and returns false.
    func holdJobEnd(_ record: JobEndRecord, file: String, function: String, line: UInt) -> Bool
    /// Writes what `holdJobEnd` held.
    func flushHeld()
}

extension DirectLogHandler {
    func holdJobEnd(_ record: JobEndRecord, file: String, function: String, line: UInt) -> Bool {
        writeJobEnd(record, file: file, function: function, line: line)
        return false
    }

    func flushHeld() {}
}

extension LogField {
    /// Every field, in the order of their names (the stderr line sorts its fields).
    static let byName: [LogField] = allCases.sorted { $0.rawValue < $1.rawValue }
}

extension StderrLogHandler: DirectLogHandler {
    func writeRecord(level: Logger.Level, message: String, fields: [(LogField, String)], id: MessageID?,
               file: String, function: String, line: UInt) {
        flushHeld()
        var out: [UInt8] = []
        out.reserveCapacity(128 + message.utf8.count)
        out.append(contentsOf: "loopd ".utf8)
        out.append(contentsOf: level.rawValue.utf8)
        out.append(contentsOf: ": ".utf8)
        out.append(contentsOf: message.utf8)
        // The same order as `log(event:)`: by key; MESSAGE_ID is left out.
        for key in LogField.byName {
            for (k, v) in fields where k == key {
                out.append(0x20)
                out.append(contentsOf: k.rawValue.utf8)
                out.append(UInt8(ascii: "="))
                out.append(contentsOf: v.utf8)
            }
        }
        out.append(0x0A)
        writeLine(out)
    }

    /// Writes one finished line, as `log(event:)` does.
    func writeLine(_ line: [UInt8]) {
        writeLogBytes(fileDescriptor, line)
    }
}

extension JournalLogHandler: DirectLogHandler {
    func writeRecord(level: Logger.Level, message: String, fields: [(LogField, String)], id: MessageID?,
                     file: String, function: String, line: UInt) {
        entry(level: level, message: message, fields: fields, id: id, file: file, function: function, line: line).send()
    }

    /// The record's journal entry: the same fields as `fields(of:)` gives
    /// for the same record, written straight into one buffer.
    func entry(level: Logger.Level, message: String, fields: [(LogField, String)], id: MessageID?,
               file: String, function: String, line: UInt) -> JournalEntry {
        var entry = JournalEntry()
        entry.buffer.reserveCapacity(256 + message.utf8.count)
        entry.ends.reserveCapacity(8 + fields.count)
        func add(_ name: String, _ value: String) {
            entry.buffer.append(contentsOf: name.utf8)
            entry.buffer.append(UInt8(ascii: "="))
            entry.buffer.append(contentsOf: value.utf8)
            entry.endField()
        }
        add("MESSAGE", message)
        add("PRIORITY", String(Self.priority(level)))
        add("SYSLOG_IDENTIFIER", identifier)
        add("CODE_FILE", file)
        add("CODE_LINE", String(line))
        add("CODE_FUNC", function)
        // The field names are valid journal field names already.
        for (k, v) in fields { add(k.rawValue, v) }
        if let id { add("MESSAGE_ID", id.rawValue) }
        return entry
    }
}
