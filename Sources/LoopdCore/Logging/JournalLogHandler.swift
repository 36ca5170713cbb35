import LoopPlatform
import CSystemd
import Logging

/// A swift-log handler writing native journal entries through
/// sd_journal_sendv: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, CODE_FILE,
/// CODE_LINE, CODE_FUNC and every metadata key as a field (sanitized to a
/// valid journal field name).
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let identifier: String

    public init(identifier: String) { self.identifier = identifier }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        Self.send(fields(of: event))
    }

    /// The entry's fields, `NAME=value` each.
    func fields(of event: LogEvent) -> [String] {
        var fields: [String] = [
            "MESSAGE=\(event.message)",
            "PRIORITY=\(Self.priority(event.level))",
            "SYSLOG_IDENTIFIER=\(identifier)",
            "CODE_FILE=\(event.file)",
            "CODE_LINE=\(event.line)",
            "CODE_FUNC=\(event.function)",
        ]
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        for (key, value) in merged {
            guard let name = Self.fieldName(key) else { continue }
            fields.append("\(name)=\(value)")
        }
        return fields
    }

    /// syslog priority of a swift-log level.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A journal field name for a metadata key: uppercase ASCII letters,
    /// digits and underscores, not starting with a digit or underscore, at
    /// most 64 bytes. nil if nothing usable is left.
    static func fieldName(_ key: String) -> String? {
        var out = ""
        for u in key.unicodeScalars {
            switch u {
            case "a"..."z": out.unicodeScalars.append(Unicode.Scalar(u.value - 32)!)
            case "A"..."Z", "0"..."9": out.unicodeScalars.append(u)
            default: out += "_"
            }
        }
        while let first = out.first, first == "_" || first.isNumber { out.removeFirst() }
        if out.count > 64 { out = String(out.prefix(64)) }
        return out.isEmpty ? nil : out
    }

    /// Sends one entry of `NAME=value` fields to journald.
    static func send(_ fields: [String], through sendv: JournalEntry.Send = sd_journal_sendv) {
        var entry = JournalEntry()
        for field in fields { entry.append(field) }
        entry.send(through: sendv)
    }
}

/// One journal entry in the native protocol: its `NAME=value` fields back
/// to back in one buffer, and where each stops. `send` hands journald one
/// iovec per field, all pointing into that buffer, and only for the length
/// of the call: no pointer outlives the closure that lends it.
struct JournalEntry {
    /// sd_journal_sendv's shape (tests pass their own, to read what is sent).
    typealias Send = (UnsafePointer<iovec>?, Int32) -> Int32

    var buffer: [UInt8] = []
    var ends: [Int] = []

    /// Appends a whole field.
    mutating func append(_ field: String) {
        buffer.append(contentsOf: field.utf8)
        ends.append(buffer.count)
    }

    /// Marks the end of a field written straight into `buffer`.
    mutating func endField() {
        ends.append(buffer.count)
    }

    /// The fields, as text (tests).
    var fields: [String] {
        var start = 0
        return ends.map { end in
            defer { start = end }
            return String(decoding: buffer[start..<end], as: UTF8.self)
        }
    }

    /// Sends the entry through `sendv`; journald's answer is not waited for
    /// or checked (a lost log record is not an error of the daemon's).
    func send(through sendv: Send = sd_journal_sendv) {
        buffer.withUnsafeBytes { raw in
            var iovecs: [iovec] = []
            iovecs.reserveCapacity(ends.count)
            var start = 0
            for end in ends {
                // journald only reads them (`const struct iovec *`).
                iovecs.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress.map { $0 + start }),
                                    iov_len: end - start))
                start = end
            }
            _ = iovecs.withUnsafeBufferPointer { sendv($0.baseAddress, Int32($0.count)) }
        }
    }
}

/// Plain `loopd LEVEL: message KEY=value…` lines on stderr, for a terminal
/// or a log file: used when not running under journald.
public struct StderrLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    /// Where the lines go: stderr, or another descriptor in tests.
    let fileDescriptor: Int32
    /// Job-end lines held for one write per batch (`DaemonLogger.holdJobEnds`).
    let held = HeldLogLines()

    public init() { fileDescriptor = 2 }

    init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        flushHeld()
        var line = "loopd \(event.level): \(event.message)"
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        for (k, v) in merged.sorted(by: { $0.key < $1.key }) where k != "MESSAGE_ID" { line += " \(k)=\(v)" }
        line += "\n"
        writeLine(Array(line.utf8))
    }
}

/// Whether stderr is connected to journald (JOURNAL_STREAM names the
/// device and inode of the stream systemd gave us; a redirect breaks it).
func stderrIsJournal(environment: [String: String]) -> Bool {
    guard let value = environment["JOURNAL_STREAM"] else { return false }
    let parts = value.split(separator: ":")
    guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
    guard let status = try? Descriptor.status(2) else { return false }
    return status.device == dev && status.inode == ino
}
