/// Fixed journal MESSAGE_IDs for loopd's lifecycle events. The catalog in
/// systemd/loopd.catalog explains each; `journalctl MESSAGE_ID=…` finds them.
public enum MessageID: String, Sendable, CaseIterable {
    /// loopd started (before its workers are ready).
    case started = "7d2f4a61c0e84a9b9e3d5b1f6a0c2e41"
    /// Every worker's loop runs; READY=1 was sent.
    case ready = "3b8e91d45f2a4c6e8d07a9b1c3e5f702"
    /// SIGTERM: loopd stops accepting and drains.
    case stopping = "c41e7b2d9a3f45e08b6c1d2e3f4a5b63"
    /// SIGHUP: the configuration was re-read and applied.
    case reloaded = "5a9c3e7f1b2d4e6f8a0b1c2d3e4f5a84"
    /// A SIGHUP's configuration was invalid and refused; the old one stays.
    case reloadFailed = "e2b4d6f8a1c3457990abcdef01234595"
    /// A worker's loop stopped turning; watchdog pings stop.
    case workerStalled = "9f1e2d3c4b5a46978877665544332216"
    /// A job failed (its action reported an error or it timed out).
    case jobFailed = "0a1b2c3d4e5f46a7b8c9d0e1f2a3b427"
    /// A job finished (completed or failed): the per-job record.
    case jobFinished = "6e5d4c3b2a1948f7e6d5c4b3a2918038"
}
