/// Who may administer the daemon over its socket: the requests that change
/// its state for everyone (today `mode`; a reload is SIGHUP only). The other
/// requests are judged elsewhere: `submit` by the action's allow lists,
/// `status`, `wait` and `cancel` by the job's owner.
///
/// Root and the daemon's own uid always may: they can already edit the
/// config, signal or trace the daemon, so refusing them would protect
/// nothing. Beyond them, `server.admin_users` lists uids and
/// `server.admin_groups` gids; a peer is admitted by its uid, or by its
/// primary or a supplementary gid (SO_PEERCRED and SO_PEERGROUPS, read
/// once when it connected). Both lists are empty by default.
extension DaemonConfig {
    /// Whether a peer with `uid`, primary `gid` and `supplementaryGroups` may
    /// make state-changing requests on a daemon running as `daemonUID`.
    /// Pure: names were resolved to ids when the config was loaded.
    public func mayAdminister(uid: UInt32, gid: UInt32?, supplementaryGroups: [UInt32] = [], daemonUID: UInt32) -> Bool {
        if uid == 0 || uid == daemonUID || server.adminUsers.contains(uid) { return true }
        let groups = server.adminGroups
        guard !groups.isEmpty else { return false }
        return gid.map(groups.contains) == true || supplementaryGroups.contains(where: groups.contains)
    }
}
