/// Who may place a job on which worker by naming it: the check the
/// scheduler makes, after the action's allow lists, before it queues a
/// job on a worker, answering `forbidden` (naming the worker) when this
/// returns false.
///
/// An automatic worker (`placement = "auto"`) takes jobs from every peer
/// that may run the action: `any` and `key` place there anyway. An
/// explicit one is a lane kept for someone, an operator's `ops` say, so
/// that their work never waits behind everyone else's; were it open to
/// all, anyone could fill it. It takes jobs only from administrators
/// (root, the daemon's own uid, `server.admin_users`, `server.admin_groups`)
/// and from the peers its own `allow_users` and `allow_groups` name (by
/// uid, by primary or supplementary gid; `allow_users = ["*"]` opens it to
/// everyone). Without either list, administrators only.
extension DaemonConfig {
    /// Whether a peer with `uid`, primary `gid` and `supplementaryGroups`
    /// may place a job on the worker named `name` of a daemon running as
    /// `daemonUID`. Pure: names were resolved to ids when the config was
    /// loaded. A worker the configuration does not list is not refused
    /// here: placement answers `unknown_worker` for it first.
    public func permits(
        worker name: String, uid: UInt32, gid: UInt32?, supplementaryGroups: [UInt32] = [], daemonUID: UInt32
    ) -> Bool {
        guard let worker = workers.first(where: { $0.name == name }), worker.placement == .explicit else { return true }
        if worker.allowAnyUser || worker.allowUsers.contains(uid) { return true }
        if gid.map(worker.allowGroups.contains) == true || supplementaryGroups.contains(where: worker.allowGroups.contains) {
            return true
        }
        return mayAdminister(uid: uid, gid: gid, supplementaryGroups: supplementaryGroups, daemonUID: daemonUID)
    }
}
