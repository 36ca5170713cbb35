import LoopPlatform

/// One exec action's containment, resolved against this host: who its
/// children run as, their resource limits, the limits of the job's cgroup,
/// their Landlock scope. Made at start and on reload; a setting this host
/// cannot honour is an error naming the key (`ExecContainment.Refusal`),
/// never silently ignored.
struct ExecContainment: Sendable {
    /// nil: loopd's own user (only a loopd that cannot switch users, told
    /// so by `[exec] user = ""`).
    var identity: ChildProcess.Identity?
    var rlimits: [ChildProcess.ResourceLimit] = []
    /// Files of the job's cgroup and what to write to them.
    var cgroupLimits: [(file: String, value: String)] = []
    var landlockScope: ChildProcess.LandlockScope = []
    var outputDrainMs: Int64 = 100

    /// A containment setting this host cannot honour.
    struct Refusal: Error, Sendable, CustomStringConvertible, Equatable {
        /// The key path, e.g. `actions.build.memory_max`.
        let key: String
        let reason: String
        var description: String { "\(key): \(reason)" }
    }

    /// What loopd itself may do here, read once per start or reload.
    struct Host: Sendable {
        var daemonUID: UInt32
        /// CAP_SETUID, CAP_SETGID and CAP_KILL: start children as another
        /// user, and signal them once they are.
        var missingCapabilities: [String]
        var landlockABI: Int32
        /// loopd's own hard resource limits by `RLIMIT_*`: a child may lower
        /// a limit but not raise it past loopd's. Absent: unlimited.
        var hardLimits: [Int32: UInt64] = [:]

        var canSwitchUsers: Bool { missingCapabilities.isEmpty }

        static func current() -> Host {
            var missing: [String] = []
            if !Privileges.has(.setuid) { missing.append("CAP_SETUID") }
            if !Privileges.has(.setgid) { missing.append("CAP_SETGID") }
            if !Privileges.has(.kill) { missing.append("CAP_KILL") }
            var hard: [Int32: UInt64] = [:]
            for resource in rlimitKeys.map({ $0.limit(0).resource }) {
                hard[resource] = ChildProcess.ResourceLimit.hardLimit(of: resource)
            }
            return Host(daemonUID: effectiveUserID(), missingCapabilities: missing, landlockABI: Privileges.landlockABI,
                        hardLimits: hard)
        }
    }

    /// The limit keys set per process (setrlimit).
    private static let rlimitKeys: [(key: String, value: @Sendable (DaemonConfig.Exec) -> Int64?,
                                     limit: @Sendable (UInt64) -> ChildProcess.ResourceLimit)] = [
        ("limit_nofile", \.limitNofile, ChildProcess.ResourceLimit.openFiles),
        ("limit_cpu_seconds", \.limitCPUSeconds, ChildProcess.ResourceLimit.cpuSeconds),
        ("limit_address_space", \.limitAddressSpaceBytes, ChildProcess.ResourceLimit.addressSpace),
    ]

    /// The limit keys set on the job's cgroup: the controller each needs,
    /// its file, and what is written there.
    private static let cgroupKeys: [(key: String, controller: String, file: String, value: @Sendable (DaemonConfig.Exec) -> Int64?,
                                     text: @Sendable (Int64) -> String)] = [
        ("tasks_max", "pids", "pids.max", \.tasksMax, { String($0) }),
        ("memory_max", "memory", "memory.max", \.memoryMaxBytes, { String($0) }),
        // CPUQuota= as systemd writes it: the quota per 100 ms period.
        ("cpu_max", "cpu", "cpu.max", \.cpuMaxPercent, { "\($0 * 1000) 100000" }),
    ]

    /// The controllers the config's limits need.
    static func controllers(_ config: DaemonConfig) -> Set<String> {
        let execs = config.actions.values.compactMap(\.exec)
        return Set(cgroupKeys.filter { key in execs.contains { key.value($0) != nil } }.map(\.controller))
    }

    /// Every exec action's containment, or the first setting this host
    /// cannot honour (actions in name order, so the error is stable).
    static func resolve(_ config: DaemonConfig, host: Host, supervisor: ExecSupervisor) throws(Refusal) -> [String: ExecContainment] {
        var out: [String: ExecContainment] = [:]
        for name in config.actions.keys.sorted() {
            guard let exec = config.actions[name]?.exec else { continue }
            out[name] = try resolve(exec, named: name, defaults: config.exec, host: host, supervisor: supervisor)
        }
        return out
    }

    static func resolve(_ exec: DaemonConfig.Exec, named name: String, defaults: DaemonConfig.ExecDefaults,
                        host: Host, supervisor: ExecSupervisor) throws(Refusal) -> ExecContainment {
        var c = ExecContainment()
        c.identity = try identity(exec, named: name, defaults: defaults, host: host)
        c.outputDrainMs = defaults.outputDrainMs
        if defaults.landlock == .auto && host.landlockABI >= ChildProcess.LandlockScope.minimumABI {
            c.landlockScope = [.signals, .abstractUnixSockets]
        }
        for key in rlimitKeys {
            guard let value = key.value(exec).map(UInt64.init) else { continue }
            let limit = key.limit(value)
            if let hard = host.hardLimits[limit.resource], value > hard {
                throw Refusal(key: "actions.\(name).\(key.key)", reason: "\(value) is above loopd's own hard limit "
                              + "(\(hard)), which its children cannot raise")
            }
            c.rlimits.append(limit)
        }
        for limit in cgroupKeys {
            guard let value = limit.value(exec) else { continue }
            guard let cgroups = supervisor.cgroups else {
                throw Refusal(key: "actions.\(name).\(limit.key)", reason: "needs a cgroup per job with the \(limit.controller) "
                              + "controller, and this loopd makes no job cgroups (\(supervisor.cgroupsUnavailable ?? "unavailable"))")
            }
            guard cgroups.controllers.contains(limit.controller) else {
                throw Refusal(key: "actions.\(name).\(limit.key)", reason: "needs the \(limit.controller) controller in the job "
                              + "cgroups under \(cgroups.root), and the host does not delegate it there (on a hybrid host "
                              + "the unified hierarchy has no controllers; loopd picks controllers at start)")
            }
            c.cgroupLimits.append((limit.file, limit.text(value)))
        }
        return c
    }

    /// Who an action's children run as: its `user` (else `[exec] user`)
    /// with its primary group (or the action's `group`) and its groups.
    private static func identity(_ exec: DaemonConfig.Exec, named name: String, defaults: DaemonConfig.ExecDefaults,
                                 host: Host) throws(Refusal) -> ChildProcess.Identity? {
        let key = exec.user != nil ? "actions.\(name).user" : "exec.user"
        let user = exec.user ?? defaults.user
        if user.isEmpty {
            guard !host.canSwitchUsers else {
                throw Refusal(key: key, reason: "\"\" runs exec children as loopd's own user, which may manage every "
                              + "job and rewrite the journal; this loopd can switch users, so name the user they run as")
            }
            if exec.group != nil {
                throw Refusal(key: "actions.\(name).group", reason: "a group needs a user to switch to; [exec] user is \"\"")
            }
            return nil
        }
        let account: UserDatabase.Account
        switch UInt32(user).map(UserDatabase.account(ofUID:)) ?? UserDatabase.account(ofUser: user) {
        case .success(let found):
            account = found
        case .failure(.notFound):
            // A uid without an entry in the user database is still a uid.
            guard let uid = UInt32(user) else { throw Refusal(key: key, reason: "no user named \"\(user)\"") }
            account = UserDatabase.Account(name: user, uid: uid, gid: uid)
        case .failure(.failed(let code)):
            throw Refusal(key: key, reason: "cannot look up user \"\(user)\": \(errnoText(code))")
        }
        guard account.uid != 0 else {
            throw Refusal(key: key, reason: "exec children never run as root; name an unprivileged user")
        }
        guard account.uid != host.daemonUID else {
            throw Refusal(key: key, reason: "\"\(user)\" is loopd's own user (uid \(account.uid)), which may manage every "
                          + "job and rewrite the journal; exec children run as another user")
        }
        guard host.canSwitchUsers else {
            throw Refusal(key: key, reason: "loopd runs as uid \(host.daemonUID) without \(host.missingCapabilities.joined(separator: ", ")), "
                          + "so it cannot start children as \"\(user)\"; give it those capabilities (as the shipped unit "
                          + "does) or set [exec] user = \"\" to run them as loopd's own user")
        }
        var gid = account.gid
        if let group = exec.group {
            switch UInt32(group).map(Result<UInt32, UserDatabase.Failure>.success) ?? UserDatabase.gid(ofGroup: group) {
            case .success(let found): gid = found
            case .failure(.notFound): throw Refusal(key: "actions.\(name).group", reason: "no group named \"\(group)\"")
            case .failure(.failed(let code)):
                throw Refusal(key: "actions.\(name).group", reason: "cannot look up group \"\(group)\": \(errnoText(code))")
            }
        }
        let groups = exec.group != nil ? [gid] : UserDatabase.groups(ofUser: account.name, primary: gid)
        return ChildProcess.Identity(uid: account.uid, gid: gid, groups: groups)
    }
}
