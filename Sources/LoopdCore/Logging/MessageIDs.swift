/// Fixed journal MESSAGE_IDs for loopd's lifecycle events, each a random
/// 128-bit id (`systemd-id128 new`) that never changes once released. The
/// catalog in systemd/loopd.catalog explains each; `journalctl MESSAGE_ID=…`
/// finds them.
public enum MessageID: String, Sendable, CaseIterable {
    /// loopd started (before its workers are ready).
    case started = "75de52de7ad3439dabe1ab47cd5f9eb1"
    /// Every worker's loop runs; READY=1 was sent.
    case ready = "88f621f08d3c48ddaf754758b1d5060b"
    /// SIGTERM: loopd stops accepting and drains.
    case stopping = "5ef31f42849a4cb8b120a06715c9092d"
    /// SIGHUP: the configuration was re-read and applied.
    case reloaded = "1e2e830431e948c8ae5fec44b49d3150"
    /// A SIGHUP's configuration was invalid and refused; the old one stays.
    case reloadFailed = "78b56893d31446aba6b4710daa535ae8"
    /// A worker's loop stopped turning; watchdog pings stop.
    case workerStalled = "ca78fabf56174cf7a05e6448c1eb6f73"
    /// A job failed (its action reported an error or it timed out).
    case jobFailed = "5119e5880d1348fb9d0050fbebe6f003"
    /// A job finished (completed or failed): the per-job record.
    case jobFinished = "0c1f723c41f147c5824df2c5e5806d03"
    /// A job's `expires_in_ms` passed before it started; it never ran.
    case jobExpired = "c6d98d019a274f8caa098b87cb58250b"
    /// A schedule submitted its job for a slot, or for a `trigger`.
    case scheduleFired = "f21ac5ca63834591ac1d69528561e05f"
    /// This node registered in its fleet's database (`[fleet]`), at start or after losing it.
    case fleetJoined = "6adbedd90ea34d18b508af211b2a6065"
    /// This node stopped cleanly and marked itself as having left the fleet.
    case fleetLeft = "eeb46cb212c64fb68cf1085e5b7bc081"
    /// A node of the fleet stopped heartbeating and was declared dead.
    case fleetNodeDead = "6696225d8ce4429e96c1af4366f295b9"
    /// This node cannot take part in the fleet: the database is unreachable or refused it.
    case fleetUnavailable = "deafffea3b2e4b63bf555095e3ffc24b"
    /// A fleet job whose node stopped renewing its lease was queued again (or failed, out of attempts).
    case fleetRescue = "6b7fb35d69a1444f97366c83854a0da1"
}
