import LoopPlatform

/// `[fleet]`: this daemon as a node of a fleet sharing one PostgreSQL database.
extension ConfigLoader {
    static func readFleet(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Fleet {
        try t.rejectUnknownKeys(allowed: ["database", "password_file", "node", "heartbeat_interval_ms", "dead_after_ms", "migrate", "jobs",
                                     "retention_seconds", "listen"])
        guard let database = try t.string("database") else {
            throw t.invalid("database", "required: a libpq connection string or postgresql:// URL")
        }
        var fleet = DaemonConfig.Fleet(database: database)
        if let path = try t.string("password_file") {
            guard path.hasPrefix("/") else {
                throw t.invalid("password_file", "must be an absolute path, got \(ConfigTable.quote(path))")
            }
            fleet.passwordFile = path
        }
        if let node = try t.string("node") {
            try checkName(node, in: t, at: "node", what: "node names")
            fleet.node = node
        }
        if let ms = try t.int("heartbeat_interval_ms", in: ConfigRanges.heartbeatIntervalMs) { fleet.heartbeatIntervalMs = ms }
        if let ms = try t.int("dead_after_ms", in: ConfigRanges.deadAfterMs) { fleet.deadAfterMs = ms }
        guard fleet.deadAfterMs >= 3 * fleet.heartbeatIntervalMs else {
            throw t.invalid("dead_after_ms", "must be at least three heartbeat intervals (\(3 * fleet.heartbeatIntervalMs) ms), "
                            + "or one late heartbeat declares a live node dead; got \(fleet.deadAfterMs)")
        }
        if let migrate = try t.bool("migrate") { fleet.migrate = migrate }
        if let jobs = try t.string("jobs") {
            guard let parsed = DaemonConfig.Fleet.JobsDefault(rawValue: jobs) else {
                throw t.invalid("jobs", "must be \"local\" or \"fleet\", got \(ConfigTable.quote(jobs))")
            }
            fleet.jobs = parsed
        }
        if let seconds = try t.int("retention_seconds", in: ConfigRanges.retentionSeconds) { fleet.retentionSeconds = seconds }
        if let listen = try t.bool("listen") { fleet.listen = listen }
        return fleet
    }
}
