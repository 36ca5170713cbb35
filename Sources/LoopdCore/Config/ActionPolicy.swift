
/// Who may run which action: the check the server makes with the peer's
/// SO_PEERCRED (and, where available, SO_PEERGROUPS) before it accepts a
/// `submit`, answering `forbidden` when this returns false.
///
/// The default policy, for an action whose `[actions.NAME]` table sets
/// neither `allow_users` nor `allow_groups`:
///
/// - `echo`, `noop`, `sleep`, `fail` are open to every peer that can
///   connect. They only spend a worker's time, and the socket's mode and
///   group (`server.socket_mode`, `server.socket_group`) already decide who
///   can connect at all: that is the first gate.
/// - Everything else — `exec` actions, the debug action `stall`, actions an
///   embedder registers in code — is closed: only root and the daemon's own
///   uid may run it. An `exec` action runs a program with the daemon's
///   privileges, and `stall` freezes a worker, so opening either to other
///   users must be an explicit line in the config.
///
/// Root and the daemon's own uid are always permitted, whatever the lists
/// say: they can already edit the config, signal or trace the daemon, so
/// refusing them would protect nothing.
///
/// When a table sets an allow list, the list replaces the default (for a
/// built-in too: `[actions.echo] allow_users = []` closes `echo`):
/// `allow_users = ["*"]` admits everyone; otherwise a peer is admitted if
/// its uid is in `allow_users` or its primary or a supplementary gid is in
/// `allow_groups`.
///
/// This answers "who", not "whether it exists": unknown actions and `stall`
/// without `debug_actions` are the server's `unknown_action`, checked first.
extension DaemonConfig {
    /// The built-in actions open to every connecting peer by default.
    public static let openBuiltinActions: Set<String> = ["echo", "noop", "sleep", "fail"]

    /// Every built-in action name. An `[actions.NAME]` table for one of these
    /// holds only allow lists; an `exec` action may not take one of these names.
    public static let builtinActionNames: Set<String> = openBuiltinActions.union(["stall"])

    /// Whether a peer with `uid`, primary `gid` and `supplementaryGroups`
    /// may run `action` on a daemon running as `daemonUID`. Pure: no lookups,
    /// names were resolved to ids when the config was loaded. A nil `gid`
    /// (unknown) never matches `allow_groups` by itself.
    public func permits(
        action: String, uid: UInt32, gid: UInt32?, supplementaryGroups: [UInt32] = [], daemonUID: UInt32
    ) -> Bool {
        Self.permits(action: action, under: actions, uid: uid, gid: gid, supplementaryGroups: supplementaryGroups,
                     daemonUID: daemonUID)
    }

    /// `permits(action:…)` with the configuration's actions passed alone:
    /// the scheduler asks for every job, and calling the method on the
    /// configuration it holds would copy the whole configuration first.
    static func permits(
        action: String, under actions: [String: Action], uid: UInt32, gid: UInt32?, supplementaryGroups: [UInt32],
        daemonUID: UInt32
    ) -> Bool {
        if uid == 0 || uid == daemonUID { return true }
        guard let policy = actions[action], policy.hasExplicitPolicy else {
            return DaemonConfig.openBuiltinActions.contains(action)
        }
        if policy.allowAnyUser { return true }
        if policy.allowUsers?.contains(uid) == true { return true }
        guard let groups = policy.allowGroups else { return false }
        return gid.map(groups.contains) == true || supplementaryGroups.contains(where: groups.contains)
    }
}
