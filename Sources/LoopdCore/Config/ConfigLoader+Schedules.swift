import LoopdProtocol

/// `[schedules.NAME]`: recurring jobs. Read after the workers and actions,
/// so a schedule naming either that does not exist is refused here, not at
/// its first slot.
extension ConfigLoader {
    static let scheduleKeys = [
        "action", "args", "worker", "key", "mode", "priority", "timeout_ms", "expires_in_ms", "retries",
        "retry_backoff_ms", "durable", "every", "cron", "zone", "catch_up", "catch_up_limit", "overlap", "jitter",
    ]

    static func readSchedules(_ t: ConfigTable, _ config: DaemonConfig) throws(ConfigError) -> [String: DaemonConfig.Schedule] {
        var schedules: [String: DaemonConfig.Schedule] = [:]
        for name in t.table.keys.sorted() {
            try t.checkKeyHasNoNUL(name)
            try checkName(name, in: t, at: name, what: "schedule names")
            guard let sub = try t.table(name) else { continue }
            schedules[name] = try readSchedule(named: name, sub, config)
        }
        return schedules
    }

    static func readSchedule(named name: String, _ t: ConfigTable, _ config: DaemonConfig) throws(ConfigError)
        -> DaemonConfig.Schedule {
        try t.rejectUnknownKeys(allowed: scheduleKeys)
        guard let action = try t.string("action") else { throw t.invalid("action", "required: the action each slot runs") }
        guard config.actions[action]?.exec != nil || DaemonConfig.builtinActionNames.contains(action) else {
            throw t.invalid("action", "no action named \(ConfigTable.quote(action)): a built-in "
                + "(\(DaemonConfig.builtinActionNames.sorted().joined(separator: ", "))) or an [actions.NAME] table with argv")
        }
        var job = SubmitRequest(action: action, wait: false)
        if let args = try t.stringArray("args") {
            guard args.count <= RequestLimits.maxArgs else {
                throw t.invalid("args", "has \(args.count) items; at most \(RequestLimits.maxArgs)")
            }
            let allowed = config.actions[action]?.exec?.maxClientArgs
            if let allowed, args.count > allowed {
                throw t.invalid("args", "has \(args.count) items; action \"\(action)\" takes at most \(allowed) (its max_client_args)")
            }
            job.args = args
        }
        job.placement = try readPlacement(t, config)
        if let mode = try t.string("mode") {
            try checkName(mode, in: t, at: "mode", what: "mode names")
            job.mode = mode
        }
        if let p = try t.int("priority", in: 0...Int64(UInt32.max)) { job.priority = UInt32(p) }
        job.timeoutMs = try t.int("timeout_ms", in: 1...RequestLimits.maxTimeoutMs)
        job.expiresInMs = try t.int("expires_in_ms", in: 1...config.limits.maxExpiresInMs)
        if let n = try t.intValue("retries", in: 0...Int64(config.limits.maxRetries)) { job.retries = n }
        if let ms = try t.int("retry_backoff_ms", in: 0...config.limits.maxRetryBackoffMs) { job.retryBackoffMs = ms }
        job.durable = try t.bool("durable") ?? false

        var schedule = DaemonConfig.Schedule(name: name, job: job, when: try readWhen(t))
        if let text = try t.string("catch_up") {
            guard let c = DaemonConfig.Schedule.CatchUp(rawValue: text) else {
                throw t.invalid("catch_up", "must be \"one\", \"all\" or \"none\", got \(ConfigTable.quote(text))")
            }
            schedule.catchUp = c
        }
        if let n = try t.intValue("catch_up_limit", in: ConfigRanges.catchUpLimit) { schedule.catchUpLimit = n }
        if let text = try t.string("overlap") {
            guard let o = DaemonConfig.Schedule.Overlap(rawValue: text) else {
                throw t.invalid("overlap", "must be \"skip\", \"queue\" or \"cancel_previous\", got \(ConfigTable.quote(text))")
            }
            schedule.overlap = o
        }
        if let text = try t.string("jitter") {
            let ms = try duration(text, in: t, at: "jitter")
            // A delay as long as the period would move a slot onto the next one.
            if case .every(let period) = schedule.when, ms >= period {
                throw t.invalid("jitter", "must be shorter than the schedule's period (every = \(formatScheduleDuration(period)))")
            }
            schedule.jitterMs = ms
        }
        return schedule
    }

    private static func readPlacement(_ t: ConfigTable, _ config: DaemonConfig) throws(ConfigError) -> Placement {
        let worker = try t.string("worker"), key = try t.string("key")
        switch (worker, key) {
        case (.some, .some):
            throw t.invalid("key", "give worker or key, not both")
        case (let w?, nil):
            guard w != "any" else { return .any }
            guard config.workers.contains(where: { $0.name == w }) else {
                throw t.invalid("worker", "no worker named \(ConfigTable.quote(w)) in [[workers]]")
            }
            return .worker(w)
        case (nil, let k?):
            return .key(k)
        case (nil, nil):
            return .any
        }
    }

    private static func readWhen(_ t: ConfigTable) throws(ConfigError) -> ScheduleWhen {
        let every = try t.string("every"), cron = try t.string("cron"), zone = try t.string("zone")
        switch (every, cron) {
        case (.some, .some):
            throw t.invalid("cron", "give every or cron, not both")
        case (nil, nil):
            throw t.invalid("every", "required: every = \"5m\" (an interval) or cron = \"0 9 * * 1-5\"")
        case (let text?, nil):
            if zone != nil { throw t.invalid("zone", "only a cron schedule has a zone: every counts from the Unix epoch, in UTC") }
            let ms = try duration(text, in: t, at: "every")
            guard ms >= 1000 else { throw t.invalid("every", "must be at least 1s, got \(ConfigTable.quote(text))") }
            return .every(milliseconds: ms)
        case (nil, let text?):
            var kind = ScheduleWhen.ZoneKind.local
            if let zone {
                guard let k = ScheduleWhen.ZoneKind(rawValue: zone) else {
                    throw t.invalid("zone", "must be \"UTC\" or \"local\" (the host's zone: TZ, else /etc/localtime), got \(ConfigTable.quote(zone))")
                }
                kind = k
            }
            do {
                return .cron(try CronExpression(parsing: text), zone: kind)
            } catch {
                throw t.invalid("cron", error.message)
            }
        }
    }

    private static func duration(_ text: String, in t: ConfigTable, at key: String) throws(ConfigError) -> Int64 {
        do {
            return try parseScheduleDuration(text)
        } catch {
            throw t.invalid(key, error.message)
        }
    }
}
