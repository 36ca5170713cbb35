import CLoopShims
import Glibc

extension ChildProcess {
    /// Who a contained child runs as: set before it executes, with its
    /// supplementary groups, so it keeps none of the daemon's.
    public struct Identity: Sendable, Equatable {
        public var uid: UInt32
        public var gid: UInt32
        /// Supplementary groups (setgroups(2)); empty: none.
        public var groups: [UInt32]

        public init(uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
            self.uid = uid
            self.gid = gid
            self.groups = groups
        }
    }

    /// A resource limit of a contained child (setrlimit(2)), soft and hard
    /// set alike, so the child cannot raise it.
    public struct ResourceLimit: Sendable, Equatable {
        /// The `RLIMIT_*` constant.
        public var resource: Int32
        public var value: UInt64

        public init(resource: Int32, value: UInt64) {
            self.resource = resource
            self.value = value
        }

        /// This process's hard limit of `resource`; nil when unlimited
        /// (`RLIM_INFINITY`, all ones).
        public static func hardLimit(of resource: Int32) -> UInt64? {
            var limit = rlimit()
            guard getrlimit(__rlimit_resource_t(UInt32(resource)), &limit) == 0, limit.rlim_max != rlim_t.max else { return nil }
            return UInt64(limit.rlim_max)
        }

        /// At most `count` open descriptors (`RLIMIT_NOFILE`).
        public static func openFiles(_ count: UInt64) -> ResourceLimit {
            ResourceLimit(resource: Int32(RLIMIT_NOFILE.rawValue), value: count)
        }
        /// At most `seconds` of CPU time (`RLIMIT_CPU`), then SIGKILL (with
        /// the soft limit at the hard one, no SIGXCPU comes first).
        public static func cpuSeconds(_ seconds: UInt64) -> ResourceLimit {
            ResourceLimit(resource: Int32(RLIMIT_CPU.rawValue), value: seconds)
        }
        /// At most `bytes` of virtual address space (`RLIMIT_AS`).
        public static func addressSpace(_ bytes: UInt64) -> ResourceLimit {
            ResourceLimit(resource: Int32(RLIMIT_AS.rawValue), value: bytes)
        }
    }

    /// Landlock scopes (kernel 6.12, Landlock ABI 6): what a contained
    /// child may not reach outside its own Landlock domain.
    public struct LandlockScope: OptionSet, Sendable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }
        /// Abstract Unix sockets made outside the domain.
        public static let abstractUnixSockets = LandlockScope(rawValue: UInt64(CLOOP_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET))
        /// Signals to processes outside the domain: the daemon, other jobs.
        public static let signals = LandlockScope(rawValue: UInt64(CLOOP_LANDLOCK_SCOPE_SIGNAL))
        /// The Landlock ABI version that brought scopes.
        public static let minimumABI: Int32 = 6
    }

    /// Everything about how a contained child starts.
    public struct Contained: Sendable {
        /// argv[0] is the program's absolute path; no shell, no PATH search.
        public var argv: [String]
        /// The whole environment: nothing is inherited.
        public var environment: [String: String]
        public var workingDirectory: String
        /// nil: the daemon's own (when it cannot switch users).
        public var identity: Identity?
        public var limits: [ResourceLimit] = []
        /// An open `cgroup.procs` of the cgroup the child joins, first
        /// after its own session; nil: it stays in the daemon's cgroup.
        public var cgroupProcs: Int32?
        public var landlockScope: LandlockScope = []

        public init(argv: [String], environment: [String: String], workingDirectory: String) {
            self.argv = argv
            self.environment = environment
            self.workingDirectory = workingDirectory
        }
    }

    /// Spawns `command` contained: in a session and process group of its
    /// own (its pid is the group's id), in `cgroupProcs`' cgroup, with its
    /// limits and identity, no new privileges, no capabilities,
    /// SIGKILL when the spawning thread ends, a Landlock domain of its own
    /// when `landlockScope` asks for one, stdin from /dev/null and stdout and
    /// stderr on two new pipes (whose non-blocking read ends are returned).
    /// A step that fails before the program runs throws with the step's
    /// name, and the child is reaped.
    public static func spawn(_ command: Contained) throws(PlatformError) -> Started {
        var out: [Int32] = [0, 0], err: [Int32] = [0, 0]
        _ = try retryingInterrupts("pipe2") { cloop_pipe(&out) }
        do {
            _ = try retryingInterrupts("pipe2") { cloop_pipe(&err) }
        } catch {
            Descriptor.close(out[0]); Descriptor.close(out[1])
            throw error
        }
        defer {
            // The child has its own copies of the write ends.
            Descriptor.close(out[1])
            Descriptor.close(err[1])
        }
        do {
            let pid = try start(command, stdout: out[1], stderr: err[1])
            return Started(pid: pid, stdout: out[0], stderr: err[0])
        } catch {
            Descriptor.close(out[0])
            Descriptor.close(err[0])
            throw error
        }
    }

    private static func start(_ command: Contained, stdout: Int32, stderr: Int32) throws(PlatformError) -> pid_t {
        let cArgv = CStrings(command.argv), cEnv = CStrings(environment: command.environment)
        let limits = command.limits.map { cloop_rlimit(resource: $0.resource, soft: $0.value, hard: $0.value) }
        let groups = command.identity?.groups.map { gid_t($0) } ?? []
        var pid: pid_t = 0
        var step: Int32 = 0
        // The copies must outlive the call that reads them.
        let rc = withExtendedLifetime((cArgv, cEnv)) {
            command.workingDirectory.withCString { cwd in
                command.argv[0].withCString { path in
                    limits.withUnsafeBufferPointer { limits in
                        groups.withUnsafeBufferPointer { groups in
                            cArgv.pointers.withUnsafeBufferPointer { argv in
                                cEnv.pointers.withUnsafeBufferPointer { env in
                                    var spec = cloop_contained_spec(
                                        path: path, argv: argv.baseAddress, envp: env.baseAddress, cwd: cwd,
                                        stdout_fd: stdout, stderr_fd: stderr, cgroup_procs_fd: command.cgroupProcs ?? -1,
                                        limits: limits.baseAddress, limit_count: Int32(limits.count),
                                        set_ids: command.identity == nil ? 0 : 1,
                                        uid: uid_t(command.identity?.uid ?? 0), gid: gid_t(command.identity?.gid ?? 0),
                                        groups: groups.baseAddress, group_count: Int32(groups.count),
                                        landlock_scope: command.landlockScope.rawValue)
                                    return cloop_spawn_contained(&spec, &pid, &step)
                                }
                            }
                        }
                    }
                }
            }
        }
        guard rc == 0 else { throw PlatformError(call: stepName(step), errno: rc, detail: command.argv[0]) }
        return pid
    }

    /// The call behind a failed step of `cloop_spawn_contained`, for errors.
    static func stepName(_ step: Int32) -> String {
        switch Int(step) {
        case CLOOP_STEP_STACK: "mmap (child stack)"
        case CLOOP_STEP_CLONE: "clone"
        case CLOOP_STEP_SETSID: "setsid"
        case CLOOP_STEP_CGROUP: "cgroup.procs (joining the job's cgroup)"
        case CLOOP_STEP_RLIMIT: "setrlimit"
        case CLOOP_STEP_SETGROUPS: "setgroups"
        case CLOOP_STEP_SETGID: "setresgid"
        case CLOOP_STEP_SETUID: "setresuid"
        case CLOOP_STEP_CAPABILITIES: "capset (dropping capabilities)"
        case CLOOP_STEP_NO_NEW_PRIVS: "prctl (no new privileges)"
        case CLOOP_STEP_PDEATHSIG: "prctl (parent-death signal)"
        case CLOOP_STEP_LANDLOCK: "landlock"
        case CLOOP_STEP_CHDIR: "chdir"
        case CLOOP_STEP_STDIO: "dup3 (standard streams)"
        case CLOOP_STEP_CLOSE: "close_range"
        default: "execve"
        }
    }

    /// Sends `signal` to every process of process group `group` (kill(2)
    /// of `-group`). Whether any got it: false when the group is empty
    /// (`ESRCH`) or not ours to signal (`EPERM`).
    @discardableResult
    public static func signalGroup(_ group: pid_t, _ signal: Int32) -> Bool {
        kill(-group, signal) == 0
    }
}
