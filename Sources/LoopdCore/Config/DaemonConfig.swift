
/// Everything loopd reads from its configuration file (Config/loopd.toml),
/// validated: a value of this type is always usable as it is.
public struct DaemonConfig: Sendable, Equatable {
    /// `[server]`
    public var server = Server()
    /// `[limits]`
    public var limits = Limits()
    /// `[journal]`
    public var journal = Journal()
    /// `[quotas]`: per-uid bounds (DaemonConfig+Quotas.swift).
    public var quotas = Quotas()
    /// `[[workers]]`, in file order; at least one, names unique.
    public var workers: [Worker] = [Worker(name: "w1")]
    /// `[exec]`: how every exec action's children are contained.
    public var exec = ExecDefaults()
    /// `[actions.NAME]`: policies for built-in actions and the declared `exec` actions.
    /// An action without an entry follows the default policy (see `permits(action:uid:gid:supplementaryGroups:daemonUID:)`).
    public var actions: [String: Action] = [:]
    /// `[schedules.NAME]`: recurring jobs (DaemonConfig+Schedules.swift).
    public var schedules: [String: Schedule] = [:]
    /// `[fleet]`: nil (no table) keeps every job on this host.
    public var fleet: Fleet?

    /// The defaults every key documents (one worker, `w1`); `ConfigLoader` starts from these.
    public init() {}

    public struct Server: Sendable, Equatable {
        /// `socket`: the Unix socket path (relative paths are relative to the working directory).
        public var socketPath = "loopd.sock"
        /// `socket_mode`: permission bits of the socket node, as an octal string in the file ("0660").
        public var socketMode: UInt32 = 0o660
        /// `socket_group`: group owning the socket node; nil keeps the daemon's group.
        public var socketGroup: String?
        /// The gid `socket_group` resolved to when the config was loaded; nil when `socketGroup` is nil.
        public var socketGroupID: UInt32?
        /// `state_dir`: where the journal lives.
        public var stateDirectory = "state"
        /// `debug_actions`: enables `stall` (blocks a worker, for watchdog tests).
        public var debugActions = false
        /// `stall_threshold_ms`: a worker busy in one callout longer than this is stalled.
        public var stallThresholdMs: Int64 = 10_000
        /// `shutdown_grace_ms`: how long SIGTERM waits for running jobs.
        public var shutdownGraceMs: Int64 = 10_000
        /// `log_level`: the least severe records written; every job's end is
        /// logged at `info`, so `notice` quiets per-job records under load.
        public var logLevel = LogLevel.info
        /// `spin_before_sleeping_us`: how long the main loop and every
        /// worker's loop busy-wait for work before each sleep in the kernel
        /// (`Loop.spinBeforeSleeping`); 0 (the default) never spins. Work that
        /// arrives within the spin finds the thread awake (no eventfd write,
        /// no scheduler wake-up); the price is up to this much CPU per loop
        /// per sleep, even when nothing comes.
        public var spinBeforeSleepingUs: Int64 = 0
        /// `admin_users`: uids (integers, or user names resolved at load) that
        /// may change the daemon's state over the socket (`mode`), besides
        /// root and the daemon's own uid, which always may.
        public var adminUsers: [UInt32] = []
        /// `admin_groups`: gids (integers, or group names resolved at load)
        /// whose members, by primary or supplementary group, may do the same.
        public var adminGroups: [UInt32] = []
        /// The documented defaults.
        public init() {}
    }

    public struct Limits: Sendable, Equatable {
        /// `max_line_bytes`: longest request line; a longer one closes the connection with `too_large`.
        public var maxLineBytes = 65_536
        /// `max_connections`: connections beyond this are refused with `busy`.
        public var maxConnections = 1024
        /// `max_queued_jobs_per_worker`: submits beyond this get `queue_full`.
        public var maxQueuedJobsPerWorker = 100_000
        /// `max_pending_reply_bytes`: a connection whose unread replies exceed this stops being read (backpressure).
        public var maxPendingReplyBytes = 1_048_576
        /// `max_retained_bytes`: the estimated memory finished jobs kept for
        /// `status` may hold (besides the count bound of 100,000); the
        /// oldest finished job is forgotten first.
        public var maxRetainedBytes = 67_108_864
        /// `max_expires_in_ms`: the longest `expires_in_ms` a submit may ask for (longer: `bad_request`).
        public var maxExpiresInMs: Int64 = 86_400_000
        /// `default_expires_in_ms`: the expiry of a job that asks for none; 0: such jobs never expire.
        public var defaultExpiresInMs: Int64 = 0
        /// `max_retries`: the most `retries` a submit may ask for.
        public var maxRetries = 10
        /// `max_retry_backoff_ms`: the cap of the backoff between attempts.
        public var maxRetryBackoffMs: Int64 = 300_000
        /// `max_unique_key_bytes`: the longest `unique_key` a submit may give.
        public var maxUniqueKeyBytes = 256
        /// `retention_failed_jobs`: how many failed, timed-out or expired
        /// jobs are kept for `status`, `jobs` and `retry` apart from (and
        /// beside) the other ended jobs; 0 keeps them with the others.
        public var retentionFailedJobs = 10_000
        /// `retention_failed_bytes`: the estimated memory those failures may hold.
        public var retentionFailedBytes = 16_777_216
        /// `retention_failed_seconds`: how long a failure is kept at most,
        /// in memory; a durable one stays in the journal this long, or
        /// `journal.retention_seconds` if that is longer.
        public var retentionFailedSeconds: Int64 = 604_800
        /// `max_requests_per_pass`: requests of one connection handled per
        /// main-loop pass; the rest wait in its buffer for the next pass,
        /// so one pipelining client cannot hold the loop (and the watchdog).
        public var maxRequestsPerPass = 64
        /// The documented defaults.
        public init() {}
    }

    public struct Journal: Sendable, Equatable {
        /// `fsync`: sync each group commit to disk (turn off only for tests).
        public var fsync = true
        /// `retention_seconds`: how long finished durable jobs stay queryable.
        public var retentionSeconds: Int64 = 86_400
        /// The documented defaults.
        public init() {}
    }

    /// One `[[workers]]` entry: a resident thread running jobs one at a time.
    public struct Worker: Sendable, Equatable {
        /// `name`: unique, used by `submit --worker` and `mode`.
        public var name: String
        /// `mode`: the run mode the worker starts in ("default" is `Loop.Mode.default`).
        public var mode = "default"
        /// `placement`: whether jobs placed by `any` or by `key` may land here.
        public var placement = Placement.auto
        /// `allow_users` of an explicit worker: uids (integers, or user names
        /// resolved at load) that may name it, besides the administrators.
        public var allowUsers: [UInt32] = []
        /// True when `allow_users = ["*"]`: every peer that can connect may name it.
        public var allowAnyUser = false
        /// `allow_groups` of an explicit worker: gids (integers, or group
        /// names resolved at load) whose members, by primary or
        /// supplementary group, may name it.
        public var allowGroups: [UInt32] = []

        /// Which jobs a worker takes.
        public enum Placement: String, Sendable, Equatable {
            /// Jobs that name it, and jobs placed by `any` or `key`.
            case auto
            /// Only jobs that name it (`worker`): a lane kept for an operator,
            /// taking jobs from administrators and its allow lists only.
            case explicit
        }

        /// A worker named `name` starting in `mode`.
        public init(name: String, mode: String = "default", placement: Placement = .auto) {
            self.name = name
            self.mode = mode
            self.placement = placement
        }
    }

    /// Who may run an action, and for `exec` actions what runs.
    ///
    /// The allow lists replace the action's default policy only when at least
    /// one of them is present in the file; see `DaemonConfig.permits(action:uid:gid:supplementaryGroups:daemonUID:)`.
    public struct Action: Sendable, Equatable {
        /// `allow_users`: uids (integers, or user names resolved at load) allowed;
        /// nil when the key is absent. `["*"]` sets `allowAnyUser` and leaves this empty.
        public var allowUsers: [UInt32]? = nil
        /// True when `allow_users = ["*"]`: every peer that can connect may run the action.
        public var allowAnyUser = false
        /// `allow_groups`: gids (integers, or group names resolved at load) allowed;
        /// nil when the key is absent.
        public var allowGroups: [UInt32]? = nil
        /// Present for `exec` actions, nil for the policy table of a built-in action.
        public var exec: Exec?
        public init(allowUsers: [UInt32]? = nil, allowAnyUser: Bool = false, allowGroups: [UInt32]? = nil, exec: Exec? = nil) {
            self.allowUsers = allowUsers
            self.allowAnyUser = allowAnyUser
            self.allowGroups = allowGroups
            self.exec = exec
        }

        /// True when the file gave this action its own allow lists, replacing the default policy.
        public var hasExplicitPolicy: Bool { allowAnyUser || allowUsers != nil || allowGroups != nil }
    }

    /// `[exec]`: the containment every exec action's children get, unless
    /// the action's own keys say otherwise.
    public struct ExecDefaults: Sendable, Equatable {
        /// `user`: the account children run as (a name or a uid); its
        /// primary group and its supplementary groups come with it. "" runs
        /// them as loopd's own user, which only a loopd that cannot switch
        /// users may do (see `ExecContainment`).
        public var user = "loopd-job"
        /// `cgroup`: whether each job gets a cgroup of its own where loopd can make one.
        public var cgroup = CgroupMode.auto
        /// `landlock`: whether each job gets a Landlock domain of its own
        /// where the kernel offers scopes (Linux 6.12).
        public var landlock = LandlockMode.auto
        /// `output_drain_ms`: after a job's main process exits, how long
        /// output of what it left running is still read before the rest of
        /// its tree is stopped.
        public var outputDrainMs: Int64 = 100
        /// The documented defaults.
        public init() {}

        /// `cgroup` values.
        public enum CgroupMode: String, Sendable, Equatable, CaseIterable {
            /// A cgroup per job under loopd's own, when loopd may make one.
            case auto
            /// Never: a job's tree is its process group.
            case off
        }

        /// `landlock` values.
        public enum LandlockMode: String, Sendable, Equatable, CaseIterable {
            /// A domain per job when the kernel has Landlock scopes.
            case auto
            /// Never.
            case off
        }
    }

    /// What an `exec` action runs: the keys of its `[actions.NAME]` table besides the allow lists.
    public struct Exec: Sendable, Equatable {
        /// `argv`: the fixed program and arguments; argv[0] is an absolute path. Never a shell.
        public var argv: [String]
        /// `max_client_args`: how many client arguments may follow argv (0: none).
        public var maxClientArgs = 0
        /// `env`: the child's whole environment (nothing is inherited from the daemon).
        public var env: [String: String] = [:]
        /// `cwd`: the child's working directory.
        public var cwd = "/"
        /// `timeout_ms`: SIGTERM after this, then SIGKILL after `kill_grace_ms`.
        public var timeoutMs: Int64 = 30_000
        /// `kill_grace_ms`: how long after SIGTERM the child gets before SIGKILL.
        public var killGraceMs: Int64 = 2_000
        /// `output_cap_bytes`: stdout and stderr are each kept up to this; the rest is discarded.
        public var outputCapBytes = 65_536
        /// `user`: the account the children run as; nil: `[exec] user`.
        public var user: String?
        /// `group`: their primary group (name or gid); nil: the user's.
        public var group: String?
        /// `tasks_max`: processes and threads the job's cgroup may hold (`pids.max`).
        public var tasksMax: Int64?
        /// `memory_max`: bytes of memory the job's cgroup may use (`memory.max`).
        public var memoryMaxBytes: Int64?
        /// `cpu_max`: the share of one CPU the job's cgroup may use, in
        /// percent (`cpu.max`; 200 is two CPUs).
        public var cpuMaxPercent: Int64?
        /// `limit_nofile`: open descriptors per process (`RLIMIT_NOFILE`).
        public var limitNofile: Int64?
        /// `limit_cpu_seconds`: CPU seconds per process (`RLIMIT_CPU`).
        public var limitCPUSeconds: Int64?
        /// `limit_address_space`: bytes of address space per process (`RLIMIT_AS`).
        public var limitAddressSpaceBytes: Int64?
        /// An exec of `argv` with the documented defaults for everything else.
        public init(argv: [String]) { self.argv = argv }
    }

    /// `[fleet]`: this daemon as a node of a fleet sharing one PostgreSQL database.
    public struct Fleet: Sendable, Equatable {
        /// `database`: a libpq connection string (`host=db dbname=loopd`)
        /// or URL (`postgresql://loopd@db/loopd?sslmode=verify-full`),
        /// without a password: the file is world-readable.
        public var database: String
        /// `password_file`: the file whose first line is the database
        /// password; nil: the systemd credential `fleet-password`, else
        /// libpq's own (`~/.pgpass`, `PGPASSWORD`).
        public var passwordFile: String?
        /// `node`: this daemon's name in the fleet, unique across it; nil: the host's name.
        public var node: String?
        /// `heartbeat_interval_ms`: how often the node says it is alive.
        public var heartbeatIntervalMs: Int64 = 2_000
        /// `dead_after_ms`: a node silent this long is declared dead by the others.
        public var deadAfterMs: Int64 = 15_000
        /// `migrate`: whether the node brings an older schema up to date
        /// itself (under an advisory lock); false: only `loopd --fleet-migrate` does.
        public var migrate = true
        /// `jobs`: where a submit without `fleet` puts its job.
        public var jobs = JobsDefault.local
        /// `retention_seconds`: how long ended fleet jobs stay in the database.
        public var retentionSeconds: Int64 = 86_400
        /// `listen`: learn of new work, ends and cancels by LISTEN/NOTIFY
        /// (and a poll at each heartbeat); false: by the poll alone, for a
        /// connection through a pooler in transaction mode (PgBouncer),
        /// where a session's LISTEN does not hold.
        public var listen = true

        /// `jobs` values.
        public enum JobsDefault: String, Sendable, Equatable, CaseIterable {
            /// On this host, as without a fleet.
            case local
            /// In the fleet: any node may run it.
            case fleet
        }

        public init(database: String) { self.database = database }
    }

    /// The `log_level` names, most severe first.
    public enum LogLevel: String, Sendable, Equatable, CaseIterable {
        case error, warning, notice, info, debug
    }
}
