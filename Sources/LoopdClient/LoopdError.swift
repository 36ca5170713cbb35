@_exported import LoopdProtocol

/// Every failure of a `LoopdClient` request: a refusal or a job outcome the
/// daemon reported (`ok:false`), or a problem with the connection itself.
///
/// Match on `code`. A job that ran and did not complete (`jobFailed`,
/// `timeout`, `cancelled`) also carries the job's fields in `job`.
public struct LoopdError: Error, Sendable, CustomStringConvertible {
    /// What went wrong: the daemon's error codes (docs/PROTOCOL.md, "Error
    /// codes"), one for each case of LoopdProtocol's `ErrorCode`, plus the
    /// client's own connection errors.
    public enum Code: Sendable, Hashable, CustomStringConvertible {
        /// `bad_request`: the request was not valid.
        case badRequest
        /// `unknown_op`: the daemon does not know the operation.
        case unknownOp
        /// `unknown_action`: no such action.
        case unknownAction
        /// `unknown_worker`: no such worker.
        case unknownWorker
        /// `unknown_job`: no such job (or past retention).
        case unknownJob
        /// `unknown_schedule`: no schedule has that name.
        case unknownSchedule
        /// `queue_full`: the worker's queue is at its limit.
        case queueFull
        /// `quota_exceeded`: the client's uid is at one of its per-user
        /// quotas; the message names the quota and its value.
        case quotaExceeded
        /// `forbidden`: the client's uid/gid may not do this.
        case forbidden
        /// `too_large`: a request line was over the daemon's limit; the
        /// daemon closed the connection.
        case tooLarge
        /// `timeout`: the job ran past its timeout (`job` has its fields).
        case timeout
        /// `job_failed`: the job ran and failed (`job` has its fields).
        case jobFailed
        /// `cancelled`: the job was cancelled (`job` has its fields).
        case cancelled
        /// `expired`: the job had not started when its `expires_in_ms`
        /// passed (`job` has its fields).
        case expired
        /// `journal_unavailable`: a durable job could not be journaled.
        case journalUnavailable
        /// `fleet_unavailable`: the fleet's database cannot be used from
        /// that daemon, or it is in no fleet; the message says which.
        case fleetUnavailable
        /// `shutting_down`: the daemon is stopping.
        case shuttingDown
        /// `busy`: the daemon has too many connections; it closed this one.
        case busy
        /// `internal`: a fault inside the daemon.
        case `internal`
        /// An error code this client does not know (from a newer daemon).
        case unknown(String)
        /// The client could not connect to the socket (`errno` says why).
        case cannotConnect
        /// The connection closed (the daemon went away, or `close()` or
        /// `reconnect()` was called) before the reply came. Call
        /// `reconnect()` to carry on.
        case connectionClosed
        /// The daemon sent something that is not a valid reply.
        case invalidReply
        /// The reply did not come within `LoopdClient.Blocking`'s
        /// `replyTimeout`. The request may still be carried out (a
        /// `submit`'s job may run); its reply, if it comes, is dropped and
        /// the connection stays usable.
        case replyTimedOut
        /// The daemon's listening socket was made by another uid than the
        /// configuration's ``LoopdClient/LoopdClient/ServerUID`` requires:
        /// the client closed the connection without writing to it.
        /// ``LoopdError/serverUIDMismatch`` names the path and both uids.
        case serverUIDMismatch

        /// The code for one of the protocol's error codes.
        public init(_ code: ErrorCode) {
            switch code {
            case .badRequest: self = .badRequest
            case .unknownOp: self = .unknownOp
            case .unknownAction: self = .unknownAction
            case .unknownWorker: self = .unknownWorker
            case .unknownJob: self = .unknownJob
            case .unknownSchedule: self = .unknownSchedule
            case .queueFull: self = .queueFull
            case .quotaExceeded: self = .quotaExceeded
            case .forbidden: self = .forbidden
            case .tooLarge: self = .tooLarge
            case .timeout: self = .timeout
            case .jobFailed: self = .jobFailed
            case .cancelled: self = .cancelled
            case .expired: self = .expired
            case .journalUnavailable: self = .journalUnavailable
            case .fleetUnavailable: self = .fleetUnavailable
            case .shuttingDown: self = .shuttingDown
            case .busy: self = .busy
            case .internal: self = .internal
            }
        }

        /// The code for an `error.code` string as the daemon sends it.
        public init(wireValue: String) {
            self = ErrorCode(rawValue: wireValue).map(Code.init) ?? .unknown(wireValue)
        }

        /// The protocol's error code, or nil for a connection error or an unknown code.
        public var errorCode: ErrorCode? {
            switch self {
            case .badRequest: .badRequest
            case .unknownOp: .unknownOp
            case .unknownAction: .unknownAction
            case .unknownWorker: .unknownWorker
            case .unknownJob: .unknownJob
            case .unknownSchedule: .unknownSchedule
            case .queueFull: .queueFull
            case .quotaExceeded: .quotaExceeded
            case .forbidden: .forbidden
            case .tooLarge: .tooLarge
            case .timeout: .timeout
            case .jobFailed: .jobFailed
            case .cancelled: .cancelled
            case .expired: .expired
            case .journalUnavailable: .journalUnavailable
            case .fleetUnavailable: .fleetUnavailable
            case .shuttingDown: .shuttingDown
            case .busy: .busy
            case .internal: .internal
            case .unknown, .cannotConnect, .connectionClosed, .invalidReply, .replyTimedOut, .serverUIDMismatch: nil
            }
        }

        /// Whether the daemon sent this code (as opposed to one of the
        /// client's own: a connection error, a reply timeout).
        public var isFromDaemon: Bool {
            switch self {
            case .cannotConnect, .connectionClosed, .invalidReply, .replyTimedOut, .serverUIDMismatch: false
            default: true
            }
        }

        /// The code as the daemon spells it (`queue_full`); the client's
        /// own as `cannot_connect`, `connection_closed`, `invalid_reply`,
        /// `reply_timed_out`, `server_uid_mismatch`.
        public var description: String {
            switch self {
            case .unknown(let raw): raw
            case .cannotConnect: "cannot_connect"
            case .connectionClosed: "connection_closed"
            case .invalidReply: "invalid_reply"
            case .replyTimedOut: "reply_timed_out"
            case .serverUIDMismatch: "server_uid_mismatch"
            default: errorCode!.rawValue
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// The daemon's message (for people; it may change), or the client's.
    public var message: String
    /// For `jobFailed`, `timeout`, `cancelled` and `expired` (and a waited durable job
    /// whose journal commit failed): the job, its final state and its partial result.
    public var job: JobOutcome?
    /// For `cannotConnect`: the `errno` of the failed connect (`ENOENT`,
    /// `ECONNREFUSED`, `EACCES`, `ENAMETOOLONG` for a path too long for a
    /// Unix socket address, …), when known.
    public var errno: Int32?
    /// For `serverUIDMismatch`: the socket, the uid required and the uid
    /// that made its listening socket.
    public var serverUIDMismatch: ServerUIDMismatch?

    /// Who made the daemon's listening socket, when that is not who the
    /// client requires.
    public struct ServerUIDMismatch: Sendable, Hashable {
        /// The socket the client connected to.
        public var socketPath: String
        /// The uid the client's ``LoopdClient/LoopdClient/ServerUID`` requires there.
        public var expected: UInt32
        /// The uid of the process that made the socket listen (`SO_PEERCRED`).
        public var actual: UInt32

        /// A mismatch at `socketPath`.
        public init(socketPath: String, expected: UInt32, actual: UInt32) {
            self.socketPath = socketPath
            self.expected = expected
            self.actual = actual
        }
    }

    /// An error with a code and message.
    public init(_ code: Code, _ message: String, job: JobOutcome? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.job = job
        self.errno = errno
    }

    /// The `serverUIDMismatch` error for `mismatch`, with a message that
    /// names the path and both uids.
    public init(mismatch: ServerUIDMismatch) {
        self.init(.serverUIDMismatch, "refusing the socket at \(mismatch.socketPath): uid \(mismatch.actual) made it listen, "
                  + "not the expected uid \(mismatch.expected)")
        serverUIDMismatch = mismatch
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
