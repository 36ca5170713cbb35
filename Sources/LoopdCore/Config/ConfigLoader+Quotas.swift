/// `[quotas]`: per-uid bounds (`DaemonConfig.Quotas`).
extension ConfigLoader {
    static func readQuotas(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Quotas {
        try t.rejectUnknownKeys(allowed: [
            "max_jobs", "max_arg_bytes", "max_durable_retained_bytes", "max_connections", "max_waits",
        ])
        var q = DaemonConfig.Quotas()
        if let n = try t.intValue("max_jobs", in: ConfigRanges.quotaMaxJobs) { q.maxJobs = n }
        if let n = try t.intValue("max_arg_bytes", in: ConfigRanges.quotaMaxArgBytes) { q.maxArgBytes = n }
        if let n = try t.intValue("max_durable_retained_bytes", in: ConfigRanges.quotaMaxDurableRetainedBytes) {
            q.maxDurableRetainedBytes = n
        }
        if let n = try t.intValue("max_connections", in: ConfigRanges.quotaMaxConnections) { q.maxConnections = n }
        if let n = try t.intValue("max_waits", in: ConfigRanges.quotaMaxWaits) { q.maxWaits = n }
        return q
    }
}
