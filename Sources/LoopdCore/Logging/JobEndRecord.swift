import Logging
import LoopdProtocol

/// The log record of a job's end, kept as its parts: one is written for
/// every job, so loopd's stderr handler formats it straight from these
/// instead of building the text and the field list first. Its fields are
/// the documented journal fields (docs/OPERATIONS.md).
struct JobEndRecord {
    let jobID: String
    let worker: String
    let action: String
    /// From acceptance to the end, queueing included.
    let durationUsec: UInt64
    let state: JobState
    let error: ProtocolError?
    /// The submitting client's uid.
    let clientUID: UInt32
    /// The priority it asked for; nil for the default (no field then).
    var priority: UInt32? = nil
    /// The attempt that ended, for a job with `retries` (nil: none, no ATTEMPT= field).
    var attempt: Int? = nil
    /// For an attempt another follows: the backoff before it.
    var retryInMs: Int64? = nil
    /// What an exec job's processes used (nil: no CPU_USEC= or MEMORY_PEAK= field).
    var usage: JobUsage? = nil

    /// Whether the job failed or timed out: what an operator is warned of.
    var isFailure: Bool { state == .failed || state == .timedOut }

    /// A failed or timed-out job is a warning; an expired one a notice
    /// (work that never ran); any other end (cancelled too) is info.
    var level: Logger.Level { isFailure ? .warning : state == .expired ? .notice : .info }

    var messageID: MessageID { isFailure ? .jobFailed : state == .expired ? .jobExpired : .jobFinished }

    /// RESULT: the error code, or the state for a job without error
    /// (`formatJobEnd` writes the same without making the `String`).
    var result: String { error?.code.rawValue ?? state.rawValue }

    /// MESSAGE: `job ID (ACTION) failed: WHY`, `job ID (ACTION) timed_out: WHY`
    /// or `job ID (ACTION) STATE on WORKER`.
    var message: String {
        if let attempt, let retryInMs {
            return "job \(jobID) (\(action)) attempt \(attempt) \(state.rawValue): \(error?.message ?? ""); retrying in \(retryInMs) ms"
        }
        if isFailure { return "job \(jobID) (\(action)) \(state.rawValue): \(error?.message ?? "")" }
        return "job \(jobID) (\(action)) \(state.rawValue) on \(worker)"
    }

    var fields: [(LogField, String)] {
        var f: [(LogField, String)] = [(.jobID, jobID), (.worker, worker), (.action, action),
                                       (.durationUsec, String(durationUsec)), (.result, result), (.clientUID, String(clientUID))]
        if let priority { f.append((.jobPriority, String(priority))) }
        if let attempt { f.append((.attempt, String(attempt))) }
        if let usage {
            f.append((.cpuUsec, String(usage.cpuUsec)))
            if let peak = usage.memoryPeakBytes { f.append((.memoryPeak, String(peak))) }
        }
        return f
    }
}

extension DaemonLogger {
    /// Logs a job's end: at info, or warning when it failed. With
    /// `holdJobEnds(until:)`, the handler may hold it until the end of the
    /// loop's current batch of work; with `flushArranged`, until the caller
    /// calls `flushHeld()` as its own batch ends (before the loop's blocks
    /// run), and no block is queued for it.
    func jobEnded(_ record: JobEndRecord, flushArranged: Bool = false,
                  file: String = #fileID, function: String = #function, line: UInt = #line) {
        // The handler is reached through `holdJobEnd` first, so the usual
        // case never copies it out of its box.
        if let hold = holdJobEnd, let loop = holdLoop {
            guard directLevel <= record.level else { return }
            if hold(record, file, function, line), !flushArranged, let flush = flushHeldBlock {
                // The first line held: written once this batch's blocks
                // have run, and before the replies they queue are flushed.
                loop.perform(inModes: nil, flush)
            }
            return
        }
        if let direct {
            guard directLevel <= record.level else { return }
            direct.writeJobEnd(record, file: file, function: function, line: line)
            return
        }
        self(record.level, record.message, record.fields, id: record.messageID, file: file, function: function, line: line)
    }
}

extension DirectLogHandler {
    /// Writes a job's end as any record.
    func writeJobEnd(_ r: JobEndRecord, file: String, function: String, line: UInt) {
        writeRecord(level: r.level, message: r.message, fields: r.fields, id: r.messageID, file: file, function: function, line: line)
    }
}

extension StderrLogHandler {
    /// Writes a job's end as `log(event:)` would, from its parts: the text,
    /// then the fields in name order (ACTION, CLIENT_UID, DURATION_USEC,
    /// JOB_ID, JOB_PRIORITY when given, RESULT, WORKER).
    func writeJobEnd(_ r: JobEndRecord, file: String, function: String, line: UInt) {
        flushHeld()
        var out: [UInt8] = []
        appendJobEnd(r, to: &out)
        writeLine(out)
    }

    /// Appends the line of a job's end to `out`, made on the stack first
    /// (one append, not one a piece).
    func appendJobEnd(_ r: JobEndRecord, to out: inout [UInt8]) {
        out.appendFormatted(stackBytes: 512, { formatJobEnd(r, into: &$0) }, else: { formatJobEnd(r, into: &$0) })
    }

    /// Writes the line of a job's end, newline included, to `out`.
    func formatJobEnd(_ r: JobEndRecord, into out: inout some ByteOutput) {
        out.appendLiteral("loopd ")
        out.appendLiteral(r.level.literal)
        out.appendLiteral(": job ")
        out.appendUTF8(r.jobID)
        out.appendLiteral(" (")
        out.appendUTF8(r.action)
        if let attempt = r.attempt, let retryInMs = r.retryInMs {
            out.appendLiteral(") attempt ")
            out.appendDecimal(UInt64(attempt))
            out.appendLiteral(" ")
            out.appendLiteral(r.state.literal)
            out.appendLiteral(": ")
            out.appendUTF8(r.error?.message ?? "")
            out.appendLiteral("; retrying in ")
            out.appendDecimal(UInt64(retryInMs))
            out.appendLiteral(" ms")
        } else if r.isFailure {
            out.appendLiteral(") ")
            out.appendLiteral(r.state.literal)
            out.appendLiteral(": ")
            out.appendUTF8(r.error?.message ?? "")
        } else {
            out.appendLiteral(") ")
            out.appendLiteral(r.state.literal)
            out.appendLiteral(" on ")
            out.appendUTF8(r.worker)
        }
        out.appendLiteral(" ACTION=")
        out.appendUTF8(r.action)
        if let attempt = r.attempt {
            out.appendLiteral(" ATTEMPT=")
            out.appendDecimal(UInt64(attempt))
        }
        out.appendLiteral(" CLIENT_UID=")
        out.appendDecimal(UInt64(r.clientUID))
        out.appendLiteral(" DURATION_USEC=")
        out.appendDecimal(r.durationUsec)
        out.appendLiteral(" JOB_ID=")
        out.appendUTF8(r.jobID)
        if let priority = r.priority {
            out.appendLiteral(" JOB_PRIORITY=")
            out.appendDecimal(UInt64(priority))
        }
        out.appendLiteral(" RESULT=")
        if let error = r.error { out.appendUTF8(error.code.rawValue) } else { out.appendLiteral(r.state.literal) }
        out.appendLiteral(" WORKER=")
        out.appendUTF8(r.worker)
        out.append(0x0A)
    }
}

extension Logger.Level {
    /// `rawValue` as a literal, for a log line that copies its bytes
    /// without a `String`.
    var literal: StaticString {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }
}
