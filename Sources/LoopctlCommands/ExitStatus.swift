/// loopctl's exit codes. Scripts rely on them; they never change meaning.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The operation succeeded (for `submit`, the job completed).
    case ok = 0
    /// The daemon answered with an error: the job failed, timed out or was
    /// cancelled, or the operation was refused (unknown worker, forbidden,
    /// queue full, a job that could not be cancelled, …). The error code is
    /// printed on stderr.
    case failed = 1
    /// The command line is wrong (ArgumentParser's usage errors).
    case usage = 2
    /// Nothing accepts connections at the socket path.
    case cannotConnect = 3
    /// The daemon closed the connection or sent something that is not a reply.
    case protocolError = 4

    /// The status for a client-side failure.
    init(_ error: ClientError) {
        switch error {
        case .cannotConnect: self = .cannotConnect
        case .closed, .protocol: self = .protocolError
        }
    }
}
