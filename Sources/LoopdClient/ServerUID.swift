extension LoopdClient {
    /// Which user must have made the daemon's listening socket: checked on
    /// every connect (and reconnect) before any request is written, so a
    /// socket someone else made never receives a job's arguments.
    ///
    /// The kernel reports, for the client's connected socket, the
    /// credentials of the process that called `listen(2)` on the other end
    /// (`SO_PEERCRED`). For the installed socket that is systemd
    /// (`loopd.socket`) or loopd started as root, so uid 0, even when loopd
    /// itself then runs as another user.
    public enum ServerUID: Sendable, Hashable, CustomStringConvertible {
        /// uid 0 at ``LoopdClient/installedSocketPath``, no check at any
        /// other path (the path compared as given). The default.
        case automatic
        /// This uid, at any path: for a daemon that a known user started
        /// and that made its socket itself.
        case uid(UInt32)
        /// No check.
        case any

        /// The uid required of the listener at `socketPath`; nil when
        /// there is no check.
        public func expectedUID(at socketPath: String) -> UInt32? {
            switch self {
            case .automatic: socketPath == LoopdClient.installedSocketPath ? 0 : nil
            case .uid(let uid): uid
            case .any: nil
            }
        }

        /// `automatic`, `any`, or the uid as a number (as loopctl's
        /// `--server-uid` takes it).
        public var description: String {
            switch self {
            case .automatic: "automatic"
            case .uid(let uid): "\(uid)"
            case .any: "any"
            }
        }
    }
}
