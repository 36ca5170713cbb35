import Glibc

/// How serious a log record is (syslog priorities).
public enum LogLevel: Int, Sendable, Comparable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue > b.rawValue }

    var label: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }
}

/// The structured fields a record may carry; their names are the journal
/// field names (docs/OPERATIONS.md).
public enum LogField: String, Sendable {
    case jobID = "JOB_ID"
    case worker = "WORKER"
    case action = "ACTION"
    case durationUsec = "DURATION_USEC"
    case result = "RESULT"
    case clientUID = "CLIENT_UID"
}

/// Where the daemon's records go. The default writes plain lines to stderr.
public typealias LogSink = @Sendable (LogLevel, String, [(LogField, String)]) -> Void

/// Writes `level: message key=value…` lines to stderr.
public let stderrLogSink: LogSink = { level, message, fields in
    var line = "loopd \(level.label): \(message)"
    for (k, v) in fields { line += " \(k.rawValue)=\(v)" }
    line += "\n"
    var bytes = Array(line.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
