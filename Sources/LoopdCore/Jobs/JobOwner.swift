import LoopPlatform

/// The credentials a job was submitted with: what the action's allow lists
/// are checked against, at submission and again at a replay, and whose
/// `status` and `cancel` requests the job answers.
struct JobOwner: Sendable, Hashable {
    var uid: UInt32
    /// The primary gid; nil for a job replayed from a record that predates
    /// loopd keeping it, which the allow lists then judge by uid alone.
    var gid: UInt32?
    /// Supplementary groups (SO_PEERGROUPS); empty when unknown.
    var groups: [UInt32] = []

    init(uid: UInt32, gid: UInt32?, groups: [UInt32] = []) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    init(_ peer: UnixSocket.Peer) {
        self.init(uid: peer.uid, gid: peer.gid, groups: peer.groups)
    }

    /// Whether a peer with `uid` may see and cancel a job of `owner` (nil:
    /// owner unknown, from an old journal record): the owner itself, root, and
    /// the daemon's own uid, which may also run every action.
    static func mayManage(jobOf owner: UInt32?, uid: UInt32, daemonUID: UInt32) -> Bool {
        uid == 0 || uid == daemonUID || owner == uid
    }
}
