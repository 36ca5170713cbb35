import LoopRuntime
import LoopdProtocol

/// Requests parked until a job ends: `wait`s, and `cancel`s of running
/// jobs. A waiter holds nothing but its connection's reply sink; one whose
/// connection closes is dropped at once. Each `wait` and duplicate is
/// counted against its uid in the ledger while it is parked
/// (`quotas.max_waits`). Main thread only.
final class JobWaiters {
    /// What a parked request answers once its job ends.
    enum Kind {
        /// A `wait`: the job's reply, as a waited `submit` gets it.
        case wait
        /// A `cancel` of a running job: whether it was the cancel that ended it.
        case cancel
        /// A waited `submit` whose `unique_key` named this job: its reply, marked `duplicate`.
        case duplicate
    }

    struct Waiter {
        let kind: Kind
        let sink: ReplySink
        let requestID: RequestID?
        /// Ends a `wait` that gave a timeout.
        var timer: LoopTimer?
        /// Tells this waiter apart from others on the same job.
        let serial: UInt64
        /// The uid it counts against (`wait` and `duplicate`); nil for a
        /// `cancel`, which only a job that runs can park.
        let countedUID: UInt32?
    }

    private let ledger: UserLedger

    init(ledger: UserLedger) {
        self.ledger = ledger
    }

    @exclusivity(unchecked) private var byJob: [String: [Waiter]] = [:] {
        // Not `oldValue`: naming it would copy the table at every change.
        didSet {
            guard byJob.isEmpty == occupied else { return }
            occupied.toggle()
            onOccupied?(occupied)
        }
    }
    /// Whether `byJob` held a waiter when `onOccupied` was last told.
    private var occupied = false
    /// The jobs each sink waits for, to drop its waiters when it closes.
    @exclusivity(unchecked) private var jobsBySink: [ObjectIdentifier: Set<String>] = [:]
    private var nextSerial: UInt64 = 0

    var isEmpty: Bool { byJob.isEmpty }

    /// Told `true` when the first request is parked and `false` when the
    /// last one leaves: while any is, every job's end is wanted at once.
    var onOccupied: ((Bool) -> Void)?

    /// Parks a request of `uid` on `jobID`; returns its serial. The sink owes the reply from now on.
    func add(_ kind: Kind, on jobID: String, sink: ReplySink, requestID: RequestID?, uid: UInt32) -> UInt64 {
        nextSerial += 1
        sink.owe()
        let counted: UInt32? = kind == .cancel ? nil : uid
        if let counted { ledger.change(counted) { $0.waits += 1 } }
        byJob[jobID, default: []].append(Waiter(kind: kind, sink: sink, requestID: requestID, timer: nil,
                                                serial: nextSerial, countedUID: counted))
        jobsBySink[ObjectIdentifier(sink), default: []].insert(jobID)
        return nextSerial
    }

    /// Gives the waiter `serial` on `jobID` a timer to invalidate when it leaves.
    func setTimer(_ timer: LoopTimer, serial: UInt64, on jobID: String) {
        guard let i = byJob[jobID]?.firstIndex(where: { $0.serial == serial }) else { return }
        byJob[jobID]![i].timer = timer
    }

    /// Removes and returns every waiter of a job that ended.
    func takeAll(of jobID: String) -> [Waiter] {
        // Most jobs have no waiter: skip the lookup (it hashes the id).
        guard !byJob.isEmpty, let waiters = byJob.removeValue(forKey: jobID) else { return [] }
        for w in waiters {
            w.timer?.invalidate()
            uncount(w)
            forget(jobID, for: w.sink)
        }
        return waiters
    }

    /// Removes and returns one waiter (its `wait` timed out).
    func take(serial: UInt64, of jobID: String) -> Waiter? {
        guard var waiters = byJob[jobID], let i = waiters.firstIndex(where: { $0.serial == serial }) else { return nil }
        let w = waiters.remove(at: i)
        byJob[jobID] = waiters.isEmpty ? nil : waiters
        w.timer?.invalidate()
        uncount(w)
        if !waiters.contains(where: { $0.sink === w.sink }) { forget(jobID, for: w.sink) }
        return w
    }

    /// Drops every waiter of a closed connection: nothing is owed to it any more.
    func dropAll(of sink: ReplySink) {
        guard let jobIDs = jobsBySink.removeValue(forKey: ObjectIdentifier(sink)) else { return }
        for jobID in jobIDs {
            guard var waiters = byJob[jobID] else { continue }
            waiters.removeAll { w in
                guard w.sink === sink else { return false }
                w.timer?.invalidate()
                uncount(w)
                return true
            }
            byJob[jobID] = waiters.isEmpty ? nil : waiters
        }
    }

    /// A waiter left: its uid holds one wait fewer.
    private func uncount(_ w: Waiter) {
        if let uid = w.countedUID { ledger.change(uid) { $0.waits -= 1 } }
    }

    private func forget(_ jobID: String, for sink: ReplySink) {
        let key = ObjectIdentifier(sink)
        jobsBySink[key]?.remove(jobID)
        if jobsBySink[key]?.isEmpty == true { jobsBySink[key] = nil }
    }
}
