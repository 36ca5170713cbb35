/// What an exec job's processes used, as the kernel counted them: the
/// `usage` object of `status`, of each `jobs` entry and of a waited
/// `submit`'s (or `wait`'s) reply. Only an exec job that ran has one.
public struct JobUsage: Sendable, Equatable {
    /// Where the daemon read the figures.
    public enum Source: Sendable, Equatable {
        /// The job's cgroup: every process of its tree.
        case cgroup
        /// wait4(2) of the job's main process: that process and the
        /// descendants it waited for (a host without job cgroups).
        case rusage
        /// A source this client does not know, as the daemon named it.
        case other(String)

        /// The source for a `source` string as the daemon sends it.
        public init(wireValue: String) {
            switch wireValue {
            case "cgroup": self = .cgroup
            case "rusage": self = .rusage
            default: self = .other(wireValue)
            }
        }

        /// The name the daemon sends.
        public var wireValue: String {
            switch self {
            case .cgroup: "cgroup"
            case .rusage: "rusage"
            case .other(let name): name
            }
        }
    }

    /// CPU time in user mode, microseconds.
    public var cpuUserUsec: Int64
    /// CPU time in the kernel on the job's behalf, microseconds.
    public var cpuSystemUsec: Int64
    /// The most memory in use at once, bytes; nil when the daemon could
    /// not tell.
    public var memoryPeakBytes: Int64?
    /// Where the figures come from.
    public var source: Source

    /// User plus system CPU time, microseconds.
    public var cpuUsec: Int64 { cpuUserUsec &+ cpuSystemUsec }
}

extension JobUsage {
    /// The `usage` member of `reply`; nil when it has none, or one without
    /// its CPU times.
    init?(member reply: JSON) {
        guard let usage = reply.present("usage"), let user = usage.optionalInt("cpu_user_usec"),
              let system = usage.optionalInt("cpu_system_usec") else { return nil }
        self.init(cpuUserUsec: user, cpuSystemUsec: system, memoryPeakBytes: usage.optionalInt("memory_peak_bytes"),
                  source: Source(wireValue: usage.optionalString("source") ?? ""))
    }
}
