import Logging
import LoopRuntime

/// The structured fields a record may carry; their names are the journal
/// field names (docs/OPERATIONS.md), defined here once.
public enum LogField: String, Sendable, CaseIterable {
    case jobID = "JOB_ID"
    case worker = "WORKER"
    case action = "ACTION"
    case durationUsec = "DURATION_USEC"
    case result = "RESULT"
    case clientUID = "CLIENT_UID"
    /// The job's priority, on the records of a job that asked for one
    /// (journald's own `PRIORITY` is the record's syslog level).
    case jobPriority = "JOB_PRIORITY"
    /// Which attempt of a job with `retries` ended (from 1).
    case attempt = "ATTEMPT"
    /// CPU time (user and system) an exec job's processes used, microseconds.
    case cpuUsec = "CPU_USEC"
    /// The most memory an exec job's processes used at once, bytes.
    case memoryPeak = "MEMORY_PEAK"
    /// The schedule a record is about (`[schedules.NAME]`).
    case schedule = "SCHEDULE"
    /// The slot a schedule's run is for, RFC 3339 in UTC.
    case slot = "SLOT"
    /// The fleet node a record is about (`[fleet]`), when not this one.
    case fleetNode = "FLEET_NODE"
}

/// The daemon's logger: swift-log underneath, with loopd's fields and
/// message ids spelled one way everywhere.
///
/// Its parts live in one immutable object, so a copy (components keep
/// their own, and a job's end copies the scheduler's) is one retain; a
/// change makes new parts.
public struct DaemonLogger: Sendable {
    private final class Parts: Sendable {
        let logger: Logger
        /// `logger`'s handler when it is one of loopd's own and has no
        /// metadata of its own: records then skip swift-log's metadata
        /// dictionary (one is written per job, so this is on the hot path).
        let direct: (any DirectLogHandler)?
        /// `direct`'s level, and its `holdJobEnd` as a closure: a job's end
        /// reaches the handler without copying it out of its existential
        /// box (an outlined copy and a destroy per job).
        let directLevel: Logger.Level
        let holdJobEnd: (@Sendable (JobEndRecord, String, String, UInt) -> Bool)?
        /// The block that writes what `direct` held, queued once per batch
        /// that holds a record: made once per handler, not once per batch.
        let flushHeldBlock: (@Sendable () -> Void)?
        /// The loop whose batches job-end records may be held for (see
        /// `holdJobEnds(until:)`); nil: every record is written at once.
        let holdLoop: Loop?

        init(_ logger: Logger, holdLoop: Loop?) {
            self.logger = logger
            if let handler = logger.handler as? any DirectLogHandler, handler.metadata.isEmpty {
                direct = handler
                directLevel = handler.logLevel
                holdJobEnd = { handler.holdJobEnd($0, file: $1, function: $2, line: $3) }
                flushHeldBlock = { handler.flushHeld() }
            } else {
                direct = nil
                directLevel = logger.logLevel
                holdJobEnd = nil
                flushHeldBlock = nil
            }
            self.holdLoop = holdLoop
        }
    }

    private var parts: Parts

    /// The swift-log logger records go to.
    public var logger: Logger {
        get { parts.logger }
        set { parts = Parts(newValue, holdLoop: parts.holdLoop) }
    }
    var direct: (any DirectLogHandler)? { parts.direct }
    var directLevel: Logger.Level { parts.directLevel }
    var holdJobEnd: (@Sendable (JobEndRecord, String, String, UInt) -> Bool)? { parts.holdJobEnd }
    var flushHeldBlock: (@Sendable () -> Void)? { parts.flushHeldBlock }
    var holdLoop: Loop? { parts.holdLoop }

    public init(_ logger: Logger) {
        parts = Parts(logger, holdLoop: nil)
    }

    /// Lets the handler hold job-end records and write them together once
    /// `loop` has run the blocks of its current batch (the stderr handler
    /// does: one write per batch instead of one per job). Any other record
    /// writes the held ones first, so the order of records never changes;
    /// a crash loses at most one batch's job-end lines.
    public mutating func holdJobEnds(until loop: Loop) {
        parts = Parts(parts.logger, holdLoop: loop)
    }

    /// Whether records at `level` are written at all.
    public func isEnabled(_ level: Logger.Level) -> Bool {
        if let direct { return direct.logLevel <= level }
        return logger.logLevel <= level
    }

    /// Writes the job-end records the handler holds, if any (through the
    /// handler's flush block: no copy of it out of its box).
    public func flushHeld() {
        flushHeldBlock?()
    }

    /// A logger that drops everything (tests).
    public static var silent: DaemonLogger {
        DaemonLogger(Logger(label: "loopd", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Logs `message` with `fields` (and a MESSAGE_ID for lifecycle events);
    /// the call site becomes CODE_FILE/CODE_LINE/CODE_FUNC.
    public func callAsFunction(_ level: Logger.Level, _ message: @autoclosure () -> String,
                               _ fields: @autoclosure () -> [(LogField, String)] = [], id: MessageID? = nil,
                               file: String = #fileID, function: String = #function, line: UInt = #line) {
        if let direct {
            guard direct.logLevel <= level else { return }
            direct.writeRecord(level: level, message: message(), fields: fields(), id: id, file: file, function: function, line: line)
            return
        }
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [:]
        for (k, v) in fields() { metadata[k.rawValue] = .string(v) }
        if let id { metadata["MESSAGE_ID"] = .string(id.rawValue) }
        logger.log(level: level, "\(message())", metadata: metadata, source: "loopd", file: file, function: function, line: line)
    }
}

extension DaemonLogger {
    /// The logger the executable uses: native journal entries when stderr is
    /// journald's stream, plain lines on stderr otherwise.
    public static func standard(level: DaemonConfig.LogLevel, environment: [String: String]) -> DaemonLogger {
        let journal = stderrIsJournal(environment: environment)
        var logger = Logger(label: "loopd") { _ in
            journal ? JournalLogHandler(identifier: "loopd") as any LogHandler : StderrLogHandler()
        }
        logger.logLevel = level.swiftLogLevel
        return DaemonLogger(logger)
    }
}

extension DaemonConfig.LogLevel {
    var swiftLogLevel: Logger.Level {
        switch self {
        case .error: .error
        case .warning: .warning
        case .notice: .notice
        case .info: .info
        case .debug: .debug
        }
    }
}
