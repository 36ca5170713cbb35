import LoopdProtocol

/// What a job's processes used, as the kernel counted them: an exec job's
/// CPU time and peak memory. Reported by `status`, `jobs`, a waited
/// submit's reply, the job's end record (`CPU_USEC=`, `MEMORY_PEAK=`) and
/// the metrics.
public struct JobUsage: Sendable, Equatable {
    /// Where the figures come from.
    public enum Source: String, Sendable, Equatable {
        /// The job's cgroup: every process of its tree.
        case cgroup
        /// wait4(2) of its main process: that process and the descendants
        /// it waited for (a host without job cgroups).
        case rusage
    }

    /// CPU time in user mode, microseconds.
    public var cpuUserUsec: UInt64
    /// CPU time in the kernel on the job's behalf, microseconds.
    public var cpuSystemUsec: UInt64
    /// The most memory in use at once, bytes: the cgroup's `memory.peak`
    /// (with the memory controller); nil where the kernel keeps no peak
    /// for the job (wait4's would be loopd's own, whose memory the child
    /// shared until it executed).
    public var memoryPeakBytes: UInt64?
    public var source: Source

    public init(cpuUserUsec: UInt64, cpuSystemUsec: UInt64, memoryPeakBytes: UInt64?, source: Source) {
        self.cpuUserUsec = cpuUserUsec
        self.cpuSystemUsec = cpuSystemUsec
        self.memoryPeakBytes = memoryPeakBytes
        self.source = source
    }

    /// User plus system CPU time, microseconds.
    public var cpuUsec: UInt64 { cpuUserUsec &+ cpuSystemUsec }

    /// The `usage` object of `status`, `jobs` and a waited submit's reply.
    var json: JSON {
        var fields: [(String, JSON)] = [
            ("cpu_user_usec", .integer(Int64(clamping: cpuUserUsec))),
            ("cpu_system_usec", .integer(Int64(clamping: cpuSystemUsec))),
        ]
        fields.append(("memory_peak_bytes", memoryPeakBytes.map { .integer(Int64(clamping: $0)) } ?? .null))
        fields.append(("source", .string(source.rawValue)))
        return .object(fields)
    }
}
