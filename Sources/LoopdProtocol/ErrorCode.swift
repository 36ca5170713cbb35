/// The stable error codes of the protocol (docs/PROTOCOL.md). Clients match
/// on `rawValue`; it never changes once published.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// The request is not valid: bad JSON, a missing or mistyped field, an unknown field.
    case badRequest = "bad_request"
    /// The `op` is not one the daemon knows.
    case unknownOp = "unknown_op"
    /// The `action` is not configured.
    case unknownAction = "unknown_action"
    /// The named worker does not exist.
    case unknownWorker = "unknown_worker"
    /// No job has that id (or its status is past retention).
    case unknownJob = "unknown_job"
    /// No schedule has that name.
    case unknownSchedule = "unknown_schedule"
    /// The worker's queue is at its configured limit.
    case queueFull = "queue_full"
    /// The client's uid is at one of its per-user quotas (`[quotas]`); the
    /// message names the quota and its value. Nothing already accepted is lost.
    case quotaExceeded = "quota_exceeded"
    /// The client's uid/gid may not run that action.
    case forbidden
    /// A line is longer than the configured maximum; the connection closes.
    case tooLarge = "too_large"
    /// The job ran past its timeout.
    case timeout
    /// The job ran and failed.
    case jobFailed = "job_failed"
    /// The job was cancelled before it finished.
    case cancelled
    /// The job's `expires_in_ms` passed before it started; it never ran.
    case expired
    /// A durable job could not be written to the journal.
    case journalUnavailable = "journal_unavailable"
    /// The fleet's database cannot be used from this node (unreachable, a
    /// schema it does not know, its name held elsewhere), or the daemon is
    /// in no fleet; the message says which. Local jobs are unaffected.
    case fleetUnavailable = "fleet_unavailable"
    /// The daemon is stopping and accepts no new jobs.
    case shuttingDown = "shutting_down"
    /// The daemon has too many connections.
    case busy
    /// A fault inside the daemon; the message says what.
    case `internal`
}

/// A request the daemon answers with an error.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// `{"code":…,"message":…}`
    public var json: JSON { .object([("code", .string(code.rawValue)), ("message", .string(message))]) }
}
