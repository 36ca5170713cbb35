
/// The accepted range of every numeric setting, in one place so the loader,
/// the tests and `Config/loopd.toml` agree. The bounds are sanity limits: wide
/// enough for any real deployment, narrow enough to catch a slipped digit or
/// a value in the wrong unit (seconds written into a `_ms` key).
enum ConfigRanges {
    /// A socket path must fit `sockaddr_un.sun_path` (108 bytes with its NUL).
    static let socketPathMaxBytes = 107
    static let stallThresholdMs: ClosedRange<Int64> = 100...3_600_000
    /// 0 is allowed: do not wait for running jobs at all.
    static let shutdownGraceMs: ClosedRange<Int64> = 0...3_600_000
    /// 0 turns the spin off. Above 10 ms a spin costs more CPU than a
    /// wake-up ever does, so a larger value is a unit mistake (ms for µs).
    static let spinBeforeSleepingUs: ClosedRange<Int64> = 0...10_000

    /// Below 256 bytes not even a small `submit` fits.
    static let maxLineBytes: ClosedRange<Int64> = 256...16_777_216
    static let maxConnections: ClosedRange<Int64> = 1...100_000
    static let maxQueuedJobsPerWorker: ClosedRange<Int64> = 1...10_000_000
    static let maxPendingReplyBytes: ClosedRange<Int64> = 4_096...1_073_741_824
    /// From 64 KiB (a few hundred small results) to 64 GiB.
    static let maxRetainedBytes: ClosedRange<Int64> = 65_536...68_719_476_736

    /// Up to the protocol's own bound on `expires_in_ms` (seven days).
    static let maxExpiresInMs: ClosedRange<Int64> = 1...604_800_000
    /// 0 is allowed: jobs that ask for no expiry never expire.
    static let defaultExpiresInMs: ClosedRange<Int64> = 0...604_800_000
    /// 0 is allowed: no job may retry. The protocol's own bound is the top.
    static let maxRetries: ClosedRange<Int64> = 0...1000
    /// From 1 ms to a day.
    static let maxRetryBackoffMs: ClosedRange<Int64> = 1...86_400_000
    /// The protocol's own bound is the top.
    static let maxUniqueKeyBytes: ClosedRange<Int64> = 1...4096

    /// 0 is allowed: finished durable jobs are forgotten at once.
    static let retentionSeconds: ClosedRange<Int64> = 0...31_536_000
    /// 0 is allowed: failures are kept with the other ended jobs.
    static let retentionFailedJobs: ClosedRange<Int64> = 0...10_000_000
    static let retentionFailedBytes: ClosedRange<Int64> = 0...68_719_476_736

    /// `[fleet]`: from a tenth of a second to a minute between heartbeats.
    static let heartbeatIntervalMs: ClosedRange<Int64> = 100...60_000
    /// `[fleet]`: at most an hour of silence before a node is declared dead.
    static let deadAfterMs: ClosedRange<Int64> = 300...3_600_000

    /// Each worker is a resident thread.
    static let workerCount: ClosedRange<Int> = 1...256

    /// Runs one look at a `catch_up = "all"` schedule may make.
    static let catchUpLimit: ClosedRange<Int64> = 1...10_000

    static let maxClientArgs: ClosedRange<Int64> = 0...256
    static let timeoutMs: ClosedRange<Int64> = 1...86_400_000
    static let killGraceMs: ClosedRange<Int64> = 1...600_000
    /// 0 is allowed: run the program for its exit status only.
    static let outputCapBytes: ClosedRange<Int64> = 0...16_777_216
    /// 0 is allowed: stop what a job left running as soon as its main process exits.
    static let outputDrainMs: ClosedRange<Int64> = 0...60_000
    static let tasksMax: ClosedRange<Int64> = 1...4_194_304
    /// From 1 MiB: below it not even a shell starts.
    static let memoryMaxBytes: ClosedRange<Int64> = 1_048_576...(1 << 50)
    /// Percent of one CPU, from 1% to 1024 CPUs.
    static let cpuMaxPercent: ClosedRange<Int64> = 1...102_400
    /// A child needs its three standard streams.
    static let limitNofile: ClosedRange<Int64> = 3...1_048_576
    static let limitCPUSeconds: ClosedRange<Int64> = 1...31_536_000
    /// From 16 MiB: below it a dynamically linked program cannot start.
    static let limitAddressSpaceBytes: ClosedRange<Int64> = 16_777_216...(1 << 50)

    /// uid_t/gid_t without (uid_t)-1, which the kernel uses for "no id".
    static let accountID: ClosedRange<Int64> = 0...4_294_967_294
}
