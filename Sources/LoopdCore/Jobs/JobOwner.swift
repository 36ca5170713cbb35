import LoopPlatform

/// The credentials a job was submitted with: what the action's allow lists
/// are checked against, at submission and again at a replay, and whose
/// `status`, `wait` and `cancel` requests the job answers (`JobVisibility`).
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
}
