/// `[[workers]]`: at least one, names unique and usable on a command line;
/// an explicit worker's allow lists read as an action's are.
extension ConfigLoader {
    static func readWorkers(_ root: ConfigTable) throws(ConfigError) -> [DaemonConfig.Worker] {
        guard let tables = try root.tables("workers") else {
            throw root.invalid("workers", "at least one [[workers]] table is required")
        }
        guard ConfigRanges.workerCount.contains(tables.count) else {
            throw root.invalid(
                "workers",
                "must declare between \(ConfigRanges.workerCount.lowerBound) and \(ConfigRanges.workerCount.upperBound) workers, got \(tables.count)"
            )
        }
        var workers: [DaemonConfig.Worker] = []
        var firstIndex: [String: Int] = [:]
        for (index, t) in tables.enumerated() {
            try t.rejectUnknownKeys(allowed: ["name", "mode", "placement"] + allowKeys)
            guard let name = try t.string("name", nonEmpty: false) else {
                throw t.invalid("name", "required")
            }
            try checkName(name, in: t, at: "name", what: "worker names")
            // `"any"` is the placement target "least loaded worker" in `submit`.
            guard name != "any" else {
                throw t.invalid("name", "\"any\" is reserved (submit --worker any picks the least loaded worker)")
            }
            if let earlier = firstIndex[name] {
                throw t.invalid("name", "duplicate worker name \"\(name)\" (also workers[\(earlier)])")
            }
            firstIndex[name] = index
            var worker = DaemonConfig.Worker(name: name)
            if let mode = try t.string("mode", nonEmpty: false) {
                try checkName(mode, in: t, at: "mode", what: "mode names")
                // A loop can only run in a real mode; `common` stands for a set of them.
                guard mode != "common" else {
                    throw t.invalid("mode", "\"common\" is the pseudo-mode for all common modes; a worker cannot run in it")
                }
                worker.mode = mode
            }
            if let placement = try t.string("placement", nonEmpty: false) {
                guard let p = DaemonConfig.Worker.Placement(rawValue: placement) else {
                    throw t.invalid("placement", "must be \"auto\" or \"explicit\", got \(ConfigTable.quote(placement))")
                }
                worker.placement = p
            }
            try readAllowLists(t, into: &worker)
            workers.append(worker)
        }
        // `any` and `key` need somewhere to go.
        guard workers.contains(where: { $0.placement == .auto }) else {
            throw root.invalid("workers", "at least one worker must have placement = \"auto\" (jobs placed by any or key go there)")
        }
        return workers
    }

    /// `allow_users` / `allow_groups` of a worker: the same entries as an
    /// action's (names resolved now, `"*"` for everyone), and only on an
    /// explicit worker: an automatic one takes the jobs `any` and `key`
    /// place from everyone, so a list there would promise what it cannot keep.
    static func readAllowLists(_ t: ConfigTable, into worker: inout DaemonConfig.Worker) throws(ConfigError) {
        var lists = DaemonConfig.Action()
        try readAllowLists(t, into: &lists)
        guard lists.hasExplicitPolicy else { return }
        guard worker.placement == .explicit else {
            let key = lists.allowUsers != nil ? "allow_users" : "allow_groups"
            throw t.invalid(key, "only a worker with placement = \"explicit\" takes allow lists; "
                + "an auto worker runs the jobs any and key place there for every user")
        }
        worker.allowUsers = lists.allowUsers ?? []
        worker.allowAnyUser = lists.allowAnyUser
        worker.allowGroups = lists.allowGroups ?? []
    }

    /// Worker, mode and action names travel in JSON, journald fields and
    /// command lines, so they are kept to a shell- and log-safe alphabet.
    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                    || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
            }
    }

    static func checkName(_ name: String, in t: ConfigTable, at key: String, what: String) throws(ConfigError) {
        guard isValidName(name) else {
            throw t.invalid(
                key, "\(what) must be 1 to 64 of A-Z a-z 0-9 _ . -, got \(ConfigTable.quote(name))")
        }
    }
}
