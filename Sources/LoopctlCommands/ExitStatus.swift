/// loopctl's exit codes. Scripts rely on them; they never change meaning.
///
/// Most are fixed numbers. Two carry a number from the job: an exec job's
/// child that exited non-zero on its own passes its status through, and one
/// killed by a signal gives 128 plus the signal, as `systemd-run --wait` and
/// shells do. Such a status can coincide with one of loopctl's own codes
/// (a child exiting 3 looks like "cannot connect"); `--json` tells exactly.
public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// 0: the operation succeeded (for `submit` and `wait`: the job completed).
    case ok
    /// 1: the job failed (`job_failed`) and has no exit status of its own:
    /// a built-in action's failure, a child that could not start.
    case jobFailed
    /// 2: the command line is wrong (ArgumentParser's usage errors).
    case usage
    /// 3: nothing accepts connections at the socket path.
    case cannotConnect
    /// 4: the daemon closed the connection without replying, or sent
    /// something that is not a reply.
    case protocolError
    /// 5: the daemon refused the request (any refusal code: `bad_request`,
    /// `unknown_*`, `forbidden`, `queue_full`, …), or a `cancel` did not
    /// cancel. The error code is printed on stderr.
    case refused
    /// 6: `wait --timeout` passed before the job ended.
    case waitTimedOut
    /// 7: a request that changes the daemon's state (`mode`) was refused
    /// with `forbidden`: the client is not an administrator (root, loopd's
    /// own user, `server.admin_users`, `server.admin_groups`). A `forbidden`
    /// refusal of any other request (`submit`, `status`, …) is 5.
    case notAdministrator
    /// 8: the job's expiry passed before it started (`expired`); it never ran.
    case jobExpired
    /// 9: the daemon's socket was made to listen by another uid than the
    /// expected one (`--server-uid`, `LOOPD_SERVER_UID`, else 0 at
    /// `/run/loopd.sock`); nothing was sent.
    case serverUIDMismatch
    /// 124: the job ran past its timeout (`timeout`), as timeout(1) exits.
    case jobTimedOut
    /// 125: the job was cancelled (`cancelled`).
    case jobCancelled
    /// N (1…255): an exec job's child exited on its own with status N.
    case childExited(status: Int32)
    /// 128+N: an exec job's child was killed by signal N (1…127), not by a
    /// timeout or a cancel.
    case childKilled(signal: Int32)

    /// The number the process exits with.
    public var code: Int32 {
        switch self {
        case .ok: 0
        case .jobFailed: 1
        case .usage: 2
        case .cannotConnect: 3
        case .protocolError: 4
        case .refused: 5
        case .waitTimedOut: 6
        case .notAdministrator: 7
        case .jobExpired: 8
        case .serverUIDMismatch: 9
        case .jobTimedOut: 124
        case .jobCancelled: 125
        case .childExited(let status): status
        case .childKilled(let signal): 128 + signal
        }
    }

    /// `ExitStatus(code)` in words, for test failures and logs.
    public var description: String {
        switch self {
        case .childExited(let status): "\(code) (the job's exit status \(status))"
        case .childKilled(let signal): "\(code) (the job was killed by signal \(signal))"
        default: "\(code)"
        }
    }

    /// The status for a child that exited with `status`: itself when it is
    /// a failure a process can exit with (1…255), else `jobFailed`.
    public static func child(exitStatus status: Int64) -> ExitStatus {
        (1...255).contains(status) ? .childExited(status: Int32(status)) : .jobFailed
    }

    /// The status for a child killed by `signal`: 128 + signal for a real
    /// signal number (1…127), else `jobFailed`.
    public static func child(signal: Int64) -> ExitStatus {
        (1...127).contains(signal) ? .childKilled(signal: Int32(signal)) : .jobFailed
    }

    /// The status for a client-side failure.
    init(_ error: ClientError) {
        switch error {
        case .cannotConnect: self = .cannotConnect
        case .closed, .protocol: self = .protocolError
        case .serverUIDMismatch: self = .serverUIDMismatch
        }
    }

    /// The exit codes as `--help` lists them (a paragraph of its own).
    static let helpText = """
        Exit codes:
          0      success (for submit and wait: the job completed)
          1      the job failed (job_failed) without an exit status of its own
          N      submit/wait of an exec job whose child exited with status N
          2      usage error (bad arguments)
          3      cannot connect to the daemon
          4      no reply: the daemon closed the connection or sent something else
          5      the daemon refused the request (its error code is printed on
                 stderr), or cancel did not cancel
          6      wait --timeout passed before the job ended
          7      mode was refused: the client is not an administrator of loopd
                 (root, loopd's own user, server.admin_users, admin_groups)
          8      the job expired: it had not started when its expiry passed
          9      the daemon's socket was made to listen by another uid than
                 --server-uid (or LOOPD_SERVER_UID, else 0 at /run/loopd.sock)
                 expects; nothing was sent
          124    the job timed out
          125    the job was cancelled
          128+N  an exec job's child was killed by signal N

        A child's own exit status N (1-255) can be one of loopctl's codes
        (2-9, 124, 125, 128+N); --json prints the reply, which tells exactly.
        """
}
