/// `[actions.NAME]`: allow lists for built-in actions, and the declared
/// `exec` actions (a table with `argv`).
extension ConfigLoader {
    static let allowKeys = ["allow_users", "allow_groups"]
    static let execKeys = [
        "argv", "max_client_args", "env", "cwd", "timeout_ms", "kill_grace_ms", "output_cap_bytes",
    ]

    static func readActions(_ t: ConfigTable) throws(ConfigError) -> [String: DaemonConfig.Action] {
        var actions: [String: DaemonConfig.Action] = [:]
        for name in t.table.keys.sorted() {
            try t.checkKeyHasNoNUL(name)
            try checkName(name, in: t, at: name, what: "action names")
            guard let sub = try t.table(name) else { continue }  // present: keys came from the table
            actions[name] = try readAction(named: name, sub)
        }
        return actions
    }

    static func readAction(named name: String, _ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Action {
        let builtins = DaemonConfig.builtinActionNames.sorted().joined(separator: ", ")
        if DaemonConfig.builtinActionNames.contains(name) {
            // Exec keys on a built-in are a name clash, not a typo: say so.
            if t.has("argv") {
                throw t.invalid(
                    "argv", "\"\(name)\" is a built-in action and cannot be redefined; give the exec action another name")
            }
            try t.rejectUnknownKeys(
                allowed: allowKeys, context: "for the built-in action \"\(name)\"")
        } else {
            guard t.has("argv") else {
                throw t.invalid(
                    "argv", "required: \"\(name)\" is not a built-in action (\(builtins)), so it must be an exec action with argv")
            }
            try t.rejectUnknownKeys(allowed: execKeys + containmentKeys + allowKeys)
        }
        var action = DaemonConfig.Action()
        try readAllowLists(t, into: &action)
        if t.has("argv") { action.exec = try readExec(t) }
        return action
    }

    static func readExec(_ t: ConfigTable) throws(ConfigError) -> DaemonConfig.Exec {
        let argv = try t.stringArray("argv") ?? []
        guard let program = argv.first else {
            throw t.invalid("argv", "must not be empty: argv[0] is the program's absolute path")
        }
        // No PATH search and no shell, ever: the config says exactly what runs.
        guard program.hasPrefix("/") else {
            throw t.invalid("argv", at: 0, "must be an absolute path (no PATH search, no shell), got \(ConfigTable.quote(program))")
        }
        var exec = DaemonConfig.Exec(argv: argv)
        if let n = try t.intValue("max_client_args", in: ConfigRanges.maxClientArgs) { exec.maxClientArgs = n }
        if let env = try t.table("env") { exec.env = try readEnvironment(env) }
        if let cwd = try t.string("cwd") {
            guard cwd.hasPrefix("/") else {
                throw t.invalid("cwd", "must be an absolute path, got \(ConfigTable.quote(cwd))")
            }
            exec.cwd = cwd
        }
        if let ms = try t.int("timeout_ms", in: ConfigRanges.timeoutMs) { exec.timeoutMs = ms }
        if let ms = try t.int("kill_grace_ms", in: ConfigRanges.killGraceMs) { exec.killGraceMs = ms }
        if let n = try t.intValue("output_cap_bytes", in: ConfigRanges.outputCapBytes) { exec.outputCapBytes = n }
        try readContainment(t, into: &exec)
        return exec
    }

    /// `env` becomes the child's whole environment, so each entry must be a
    /// well-formed `KEY=value` once joined.
    static func readEnvironment(_ t: ConfigTable) throws(ConfigError) -> [String: String] {
        var env: [String: String] = [:]
        for key in t.table.keys {
            try t.checkKeyHasNoNUL(key)
            guard !key.isEmpty, !key.contains("=") else {
                throw t.invalid(key, "environment variable names must be non-empty and must not contain \"=\"")
            }
            env[key] = try t.string(key, nonEmpty: false)
        }
        return env
    }

    /// `allow_users` takes uids, user names and "*"; `allow_groups` takes gids and group names.
    static func readAllowLists(_ t: ConfigTable, into action: inout DaemonConfig.Action) throws(ConfigError) {
        if let entries = try t.array("allow_users") {
            var uids: [UInt32] = []
            for (i, entry) in entries.enumerated() {
                switch try t.accountEntry(entry, at: "allow_users", index: i) {
                case .id(let uid): uids.append(uid)
                case .name("*"):
                    guard entries.count == 1 else {
                        throw t.invalid("allow_users", at: i, "\"*\" allows every user and must be the only entry")
                    }
                    action.allowAnyUser = true
                case .name(let name): uids.append(try resolveUser(name, in: t, at: "allow_users", index: i))
                }
            }
            action.allowUsers = uids
        }
        if let entries = try t.array("allow_groups") {
            var gids: [UInt32] = []
            for (i, entry) in entries.enumerated() {
                switch try t.accountEntry(entry, at: "allow_groups", index: i) {
                case .id(let gid): gids.append(gid)
                case .name("*"):
                    throw t.invalid("allow_groups", at: i, "\"*\" is not a group; write allow_users = [\"*\"] to allow everyone")
                case .name(let name): gids.append(try resolveGroup(name, in: t, at: "allow_groups", index: i))
                }
            }
            action.allowGroups = gids
        }
    }
}
