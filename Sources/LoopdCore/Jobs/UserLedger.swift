/// What each uid holds of the daemon now: the figures `[quotas]` bounds
/// (`DaemonConfig.Quotas`). One table keyed by uid, outside `Job`, so a
/// job costs nothing more for being counted; a uid that holds nothing has
/// no entry. Main thread only (the scheduler, its waiters and the server
/// change it as jobs, waits and connections come and go).
final class UserLedger {
    /// One uid's holdings.
    struct Usage: Equatable {
        /// Jobs accepted and not ended.
        var jobs = 0
        /// The estimated heap bytes of those jobs' arguments (`Job.argumentBytes`).
        var argBytes = 0
        /// `wait` requests and waited duplicate submits parked on jobs.
        var waits = 0
        /// Open connections.
        var connections = 0

        var isEmpty: Bool { jobs == 0 && argBytes == 0 && waits == 0 && connections == 0 }
        var isNonNegative: Bool { jobs >= 0 && argBytes >= 0 && waits >= 0 && connections >= 0 }
    }

    @exclusivity(unchecked) private var byUID = UIDTable<Usage>()

    /// What `uid` holds now.
    func usage(of uid: UInt32) -> Usage { byUID[uid] ?? Usage() }

    /// How many uids hold anything.
    var userCount: Int { byUID.count }

    /// Changes what `uid` holds; an entry left empty is dropped.
    func change(_ uid: UInt32, _ body: (inout Usage) -> Void) {
        byUID.change(uid, make: { Usage() }, dropWhen: \.isEmpty) { usage in
            body(&usage)
            assert(usage.isNonNegative, "uid \(uid) would hold less than nothing: \(usage)")
        }
    }
}
