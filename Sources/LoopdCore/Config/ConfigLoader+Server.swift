import LoopPlatform
import TOML

/// The flat sections: `[server]`, `[limits]`, `[journal]`.
extension ConfigLoader {
    static func readServer(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Server {
        try t.rejectUnknownKeys(allowed: [
            "socket", "socket_mode", "socket_group", "state_dir", "debug_actions",
            "stall_threshold_ms", "shutdown_grace_ms", "log_level", "spin_before_sleeping_us",
            "admin_users", "admin_groups",
        ])
        var s = DaemonConfig.Server()
        if let path = try t.string("socket") {
            guard path.utf8.count <= ConfigRanges.socketPathMaxBytes else {
                throw t.invalid(
                    "socket",
                    "a Unix socket path must be at most \(ConfigRanges.socketPathMaxBytes) bytes, got \(path.utf8.count)")
            }
            s.socketPath = path
        }
        if t.has("socket_mode") { s.socketMode = try readSocketMode(t) }
        if let group = try t.string("socket_group") {
            s.socketGroup = group
            s.socketGroupID = try resolveGroup(group, in: t, at: "socket_group")
        }
        if let dir = try t.string("state_dir") { s.stateDirectory = dir }
        if let debug = try t.bool("debug_actions") { s.debugActions = debug }
        if let ms = try t.int("stall_threshold_ms", in: ConfigRanges.stallThresholdMs) { s.stallThresholdMs = ms }
        if let ms = try t.int("shutdown_grace_ms", in: ConfigRanges.shutdownGraceMs) { s.shutdownGraceMs = ms }
        if let us = try t.int("spin_before_sleeping_us", in: ConfigRanges.spinBeforeSleepingUs) {
            s.spinBeforeSleepingUs = us
        }
        if let level = try t.string("log_level") {
            guard let parsed = DaemonConfig.LogLevel(rawValue: level) else {
                let names = DaemonConfig.LogLevel.allCases.map(\.rawValue).joined(separator: ", ")
                throw t.invalid("log_level", "must be one of \(names), got \(ConfigTable.quote(level))")
            }
            s.logLevel = parsed
        }
        if let entries = try t.array("admin_users") {
            s.adminUsers = try readAccounts(entries, in: t, at: "admin_users", kind: "user")
        }
        if let entries = try t.array("admin_groups") {
            s.adminGroups = try readAccounts(entries, in: t, at: "admin_groups", kind: "group")
        }
        return s
    }

    /// `admin_users` / `admin_groups`: numeric ids, or names resolved now, so
    /// a name that does not exist stops the daemon instead of silently
    /// admitting nobody. There is no `"*"`: who may connect at all is the
    /// socket's mode and group.
    static func readAccounts(
        _ entries: [TOMLValue], in t: ConfigTable, at key: String, kind: String
    ) throws(ConfigError) -> [UInt32] {
        var ids: [UInt32] = []
        for (i, entry) in entries.enumerated() {
            switch try t.accountEntry(entry, at: key, index: i) {
            case .id(let id): ids.append(id)
            case .name("*"):
                throw t.invalid(key, at: i, "\"*\" is not accepted here: name each \(kind) that may administer loopd")
            case .name(let name):
                ids.append(kind == "user" ? try resolveUser(name, in: t, at: key, index: i)
                                          : try resolveGroup(name, in: t, at: key, index: i))
            }
        }
        return ids
    }

    /// `socket_mode` is a quoted octal string: a bare TOML integer 660 would
    /// be decimal (0o1224), and TOML forbids the leading zero of "0660".
    static func readSocketMode(_ t: ConfigTable) throws(ConfigError) -> UInt32 {
        let expected = "must be an octal string between \"0000\" and \"0777\" such as \"0660\""
        if let value = t.table["socket_mode"], value.string == nil {
            throw t.invalid("socket_mode", "\(expected), got \(t.describe(value)) (write it quoted)")
        }
        let text = try t.string("socket_mode", nonEmpty: false) ?? ""
        guard text.count <= 4, text.allSatisfy({ ("0"..."7").contains($0) }),
              let mode = UInt32(text, radix: 8), mode <= 0o777
        else {
            throw t.invalid("socket_mode", "\(expected), got \(ConfigTable.quote(text))")
        }
        return mode
    }

    static func readLimits(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Limits {
        try t.rejectUnknownKeys(allowed: [
            "max_line_bytes", "max_connections", "max_queued_jobs_per_worker", "max_pending_reply_bytes",
            "max_retained_bytes", "max_expires_in_ms", "default_expires_in_ms", "max_retries", "max_retry_backoff_ms",
            "max_unique_key_bytes", "max_requests_per_pass", "retention_failed_jobs", "retention_failed_bytes",
            "retention_failed_seconds",
        ])
        var l = DaemonConfig.Limits()
        if let n = try t.intValue("max_line_bytes", in: ConfigRanges.maxLineBytes) { l.maxLineBytes = n }
        if let n = try t.intValue("max_connections", in: ConfigRanges.maxConnections) { l.maxConnections = n }
        if let n = try t.intValue("max_queued_jobs_per_worker", in: ConfigRanges.maxQueuedJobsPerWorker) {
            l.maxQueuedJobsPerWorker = n
        }
        if let n = try t.intValue("max_pending_reply_bytes", in: ConfigRanges.maxPendingReplyBytes) {
            l.maxPendingReplyBytes = n
        }
        if let n = try t.intValue("max_retained_bytes", in: ConfigRanges.maxRetainedBytes) { l.maxRetainedBytes = n }
        if let ms = try t.int("max_expires_in_ms", in: ConfigRanges.maxExpiresInMs) { l.maxExpiresInMs = ms }
        if let ms = try t.int("default_expires_in_ms", in: ConfigRanges.defaultExpiresInMs) {
            guard ms <= l.maxExpiresInMs else {
                throw t.invalid("default_expires_in_ms",
                                "must not exceed max_expires_in_ms (\(l.maxExpiresInMs)), got \(ms)")
            }
            l.defaultExpiresInMs = ms
        }
        if let n = try t.intValue("max_retries", in: ConfigRanges.maxRetries) { l.maxRetries = n }
        if let n = try t.int("max_retry_backoff_ms", in: ConfigRanges.maxRetryBackoffMs) { l.maxRetryBackoffMs = n }
        if let n = try t.intValue("max_unique_key_bytes", in: ConfigRanges.maxUniqueKeyBytes) { l.maxUniqueKeyBytes = n }
        if let n = try t.intValue("retention_failed_jobs", in: ConfigRanges.retentionFailedJobs) { l.retentionFailedJobs = n }
        if let n = try t.intValue("retention_failed_bytes", in: ConfigRanges.retentionFailedBytes) { l.retentionFailedBytes = n }
        if let s = try t.int("retention_failed_seconds", in: ConfigRanges.retentionSeconds) { l.retentionFailedSeconds = s }
        if let n = try t.intValue("max_requests_per_pass", in: ConfigRanges.maxRequestsPerPass) { l.maxRequestsPerPass = n }
        return l
    }

    static func readJournal(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Journal {
        try t.rejectUnknownKeys(allowed: ["fsync", "retention_seconds"])
        var j = DaemonConfig.Journal()
        if let sync = try t.bool("fsync") { j.fsync = sync }
        if let s = try t.int("retention_seconds", in: ConfigRanges.retentionSeconds) { j.retentionSeconds = s }
        return j
    }

    /// A group name resolved through the group database; `key` (and `index`,
    /// for an array element) locate it for errors.
    static func resolveGroup(
        _ name: String, in t: ConfigTable, at key: String, index: Int? = nil
    ) throws(ConfigError) -> UInt32 {
        switch UserDatabase.gid(ofGroup: name) {
        case .success(let gid): return gid
        case .failure(let failure): throw lookupError(failure, "group", name, in: t, at: key, index: index)
        }
    }

    /// A user name resolved through the password database.
    static func resolveUser(
        _ name: String, in t: ConfigTable, at key: String, index: Int? = nil
    ) throws(ConfigError) -> UInt32 {
        switch UserDatabase.uid(ofUser: name) {
        case .success(let uid): return uid
        case .failure(let failure): throw lookupError(failure, "user", name, in: t, at: key, index: index)
        }
    }

    private static func lookupError(
        _ failure: UserDatabase.Failure, _ kind: String, _ name: String, in t: ConfigTable, at key: String,
        index: Int?
    ) -> ConfigError {
        let quoted = ConfigTable.quote(name)
        let message = switch failure {
        case .notFound: "no \(kind) named \(quoted)"
        case .failed(let code): "cannot look up \(kind) \(quoted): \(errnoText(code))"
        }
        return index.map { t.invalid(key, at: $0, message) } ?? t.invalid(key, message)
    }
}
