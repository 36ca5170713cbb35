extension DaemonConfig {
    /// `[quotas]`: what one uid may hold of the daemon at once, so that no
    /// member of the socket's group can exhaust loopd's memory or hold
    /// every other client (docs/OPERATIONS.md, "Sharing loopd between
    /// users"). A request beyond a quota is refused with `quota_exceeded`,
    /// naming the key and its value; nothing already accepted is touched.
    /// Root and loopd's own uid are exempt: they run the daemon and are
    /// bounded only by `[limits]`. Administrators by `server.admin_users`
    /// or `server.admin_groups` are held to the quotas like every user:
    /// being trusted to switch modes is not being allowed to exhaust memory.
    public struct Quotas: Sendable, Equatable {
        /// `max_jobs`: jobs one uid may have known and not ended (waiting,
        /// delayed, held, running, or waiting for a commit).
        public var maxJobs = 10_000
        /// `max_arg_bytes`: the estimated heap bytes of the arguments of
        /// one uid's jobs not yet ended (counted as `max_retained_bytes`
        /// counts them: `RetainedBytes`).
        public var maxArgBytes = 16_777_216
        /// `max_durable_retained_bytes`: the estimated bytes of one uid's
        /// finished durable jobs the journal keeps for `status`; a durable
        /// submit beyond it is refused until older ends are forgotten.
        public var maxDurableRetainedBytes = 16_777_216
        /// `max_connections`: connections one uid may have open.
        public var maxConnections = 16
        /// `max_waits`: `wait` requests (and waited duplicate submits) one
        /// uid may have parked on jobs that have not ended.
        public var maxWaits = 1024
        /// The documented defaults.
        public init() {}
    }
}

extension ConfigRanges {
    static let quotaMaxJobs: ClosedRange<Int64> = 1...100_000_000
    /// From 4 KiB (a few small jobs) to 64 GiB.
    static let quotaMaxArgBytes: ClosedRange<Int64> = 4_096...68_719_476_736
    static let quotaMaxDurableRetainedBytes: ClosedRange<Int64> = 4_096...68_719_476_736
    static let quotaMaxConnections: ClosedRange<Int64> = 1...100_000
    static let quotaMaxWaits: ClosedRange<Int64> = 1...10_000_000
    /// A connection's requests handled per main-loop pass: at least one,
    /// and not so many that one pass can hold the loop for long.
    static let maxRequestsPerPass: ClosedRange<Int64> = 1...65_536
}
