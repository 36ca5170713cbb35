import TOML

/// `[exec]`, and the containment keys of an exec action's table: who its
/// children run as and the limits of their process tree.
extension ConfigLoader {
    static let containmentKeys = [
        "user", "group", "tasks_max", "memory_max", "cpu_max", "limit_nofile", "limit_cpu_seconds", "limit_address_space",
    ]

    static func readExecDefaults(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.ExecDefaults {
        try t.rejectUnknownKeys(allowed: ["user", "cgroup", "landlock", "output_drain_ms"])
        var e = DaemonConfig.ExecDefaults()
        if let user = try t.account("user", allowEmpty: true) { e.user = user }
        if let mode = try t.string("cgroup") {
            guard let m = DaemonConfig.ExecDefaults.CgroupMode(rawValue: mode) else {
                throw t.invalid("cgroup", "must be \"auto\" or \"off\", got \(ConfigTable.quote(mode))")
            }
            e.cgroup = m
        }
        if let mode = try t.string("landlock") {
            guard let m = DaemonConfig.ExecDefaults.LandlockMode(rawValue: mode) else {
                throw t.invalid("landlock", "must be \"auto\" or \"off\", got \(ConfigTable.quote(mode))")
            }
            e.landlock = m
        }
        if let ms = try t.int("output_drain_ms", in: ConfigRanges.outputDrainMs) { e.outputDrainMs = ms }
        return e
    }

    /// The containment keys of one exec action, into `exec`.
    static func readContainment(_ t: ConfigTable, into exec: inout DaemonConfig.Exec) throws(ConfigError) {
        exec.user = try t.account("user", allowEmpty: false)
        exec.group = try t.account("group", allowEmpty: false)
        exec.tasksMax = try t.int("tasks_max", in: ConfigRanges.tasksMax)
        exec.memoryMaxBytes = try t.bytes("memory_max", in: ConfigRanges.memoryMaxBytes)
        exec.cpuMaxPercent = try t.percent("cpu_max", in: ConfigRanges.cpuMaxPercent)
        exec.limitNofile = try t.int("limit_nofile", in: ConfigRanges.limitNofile)
        exec.limitCPUSeconds = try t.int("limit_cpu_seconds", in: ConfigRanges.limitCPUSeconds)
        exec.limitAddressSpaceBytes = try t.bytes("limit_address_space", in: ConfigRanges.limitAddressSpaceBytes)
    }
}

extension ConfigTable {
    /// A user or group: a name, or a numeric id (kept as its decimal text,
    /// resolved when the daemon starts); "" only with `allowEmpty`.
    func account(_ key: String, allowEmpty: Bool) throws(ConfigError) -> String? {
        guard let value = table[key] else { return nil }
        if case .integer(let n) = value {
            guard ConfigRanges.accountID.contains(n) else {
                throw invalid(key, "must be a name or a numeric id between 0 and \(ConfigRanges.accountID.upperBound), got \(n)")
            }
            return String(n)
        }
        return try string(key, nonEmpty: !allowEmpty)
    }

    /// A size in bytes: an integer, or a string of digits with a binary
    /// suffix as systemd writes them ("512M", "2G"; K, M, G, T).
    func bytes(_ key: String, in range: ClosedRange<Int64>) throws(ConfigError) -> Int64? {
        guard let value = table[key] else { return nil }
        let expected = "must be a byte count between \(range.lowerBound) and \(range.upperBound), "
            + "as an integer or with a suffix K, M, G or T (\"512M\")"
        var n: Int64?
        switch value {
        case .integer(let i): n = i
        case .string(let text):
            let shifts: [Character: Int64] = ["K": 10, "M": 20, "G": 30, "T": 40]
            if let last = text.last, let shift = shifts[last], let base = Int64(text.dropLast()), base >= 0,
               base <= (Int64.max >> shift) {
                n = base << shift
            } else {
                n = Int64(text)
            }
        default: break
        }
        guard let n, range.contains(n) else { throw invalid(key, "\(expected), got \(describe(value))") }
        return n
    }

    /// A percentage: an integer, or a string such as "50%".
    func percent(_ key: String, in range: ClosedRange<Int64>) throws(ConfigError) -> Int64? {
        guard let value = table[key] else { return nil }
        var n: Int64?
        switch value {
        case .integer(let i): n = i
        case .string(let text) where text.hasSuffix("%"): n = Int64(text.dropLast())
        default: break
        }
        guard let n, range.contains(n) else {
            throw invalid(key, "must be a percentage of one CPU between \(range.lowerBound) and \(range.upperBound) "
                          + "(\"50%\", or 200 for two CPUs), got \(describe(value))")
        }
        return n
    }
}
