import LoopRuntime

/// The local store of jobs: the journal of durable jobs, and the group
/// commit that makes them durable: one journal write and fsync per
/// main-loop pass, by an observer of `.beforeWaiting`, for every record
/// appended during the pass. Jobs wait here, in arrival order, until the
/// commit that covers them (or a durable job ahead of them on their worker)
/// returns. Main thread only (its observer and timer run there).
///
/// The observer is on the loop only while the journal holds records to
/// commit: a loop with a waiting observer polls its descriptors once more
/// every pass (R17 step 5), a system call per pass that jobs without
/// `durable` would pay for nothing.
final class JournalStore: JobStore, @unchecked Sendable {
    /// A job held for the commit, and the acknowledgement it still owes
    /// (a durable `wait: false` submit is acknowledged after the commit).
    struct Entry {
        let job: Job
        let ack: ReplyAddress?
    }

    let journal: JobJournal
    private let loop: Loop
    private let log: DaemonLogger
    private(set) var observer: LoopObserver?
    /// Whether `observer` is on the loop now.
    private(set) var isArmed = false
    private var entries: [Entry] = []
    /// What waits for the next commit besides jobs: the replies of requests
    /// that journaled a change (`retry`, `discard`), told whether it failed.
    private var waiters: [(JournalError?) -> Void] = []
    /// Armed while the journal retains finished durable jobs: forgets them
    /// once past retention even if no durable work comes to do it.
    private var expiryTimer: LoopTimer?

    init(journal: JobJournal, loop: Loop, log: DaemonLogger) {
        self.journal = journal
        self.loop = loop
        self.log = log
    }

    /// Installs the observer that runs `commit` before the loop waits, and
    /// arms the expiry of finishes retained from before a restart.
    func install(commit: @escaping @Sendable () -> Void) {
        scheduleExpiry()
        observer = LoopObserver(activities: .beforeWaiting, repeats: true, order: Int.max) { [unowned self] _, _ in
            commit()
            if !journal.hasUncommitted { disarm() }
        }
        arm()
    }

    /// Holds `job` until the next commit.
    func hold(_ job: Job, ack: ReplyAddress?) {
        entries.append(Entry(job: job, ack: ack))
    }

    /// Runs `body` once the next commit has returned, with its error if it
    /// failed: a change is acknowledged only once it is on disk.
    func whenCommitted(_ body: @escaping (JournalError?) -> Void) {
        waiters.append(body)
    }

    // MARK: JobStore

    /// A durable job's submit record: its request and the attempts it has
    /// had, which a restart replays.
    func keep(_ job: Job) {
        journal.appendSubmitted(DurableJob(job))
        arm()
    }

    func keepEnd(of job: Job, _ end: Job.End) {
        keep(FinishedJob(job, end: end))
    }

    func finished(id: String) -> FinishedJob? { journal.finishedStatus(id: id) }

    // MARK: what only the journal does

    /// An end record, new or changed (a later record of the same job wins).
    func keep(_ finished: FinishedJob) {
        journal.appendFinished(finished)
        arm()
    }

    /// Forgets a durable job's record.
    func discard(id: String) {
        journal.appendDiscarded(id)
        arm()
    }

    /// Puts the observer on the loop if the journal has records to commit;
    /// called after every append.
    func arm() {
        guard !isArmed, journal.hasUncommitted, let observer else { return }
        isArmed = true
        loop.add(observer, forMode: .common)
    }

    private func disarm() {
        guard isArmed, let observer else { return }
        isArmed = false
        loop.remove(observer, forMode: .common)
    }

    /// Commits every record appended since the last commit; returns the
    /// jobs it releases, in arrival order, and the error if it failed (the
    /// durable ones among them were then not made durable). Nil when there
    /// was nothing to commit.
    func commit() -> (released: [Entry], failure: JournalError?)? {
        guard journal.hasUncommitted else { return nil }
        let released = entries
        entries.removeAll(keepingCapacity: true)
        let told = waiters
        waiters.removeAll()
        do {
            try journal.commit()
        } catch {
            log(.error, "journal commit failed: \(error)")
            for body in told { body(error) }
            return (released, error)
        }
        for body in told { body(nil) }
        // Expires finished jobs past retention and rewrites a mostly dead
        // log; without this the log and its in-memory state grew for the
        // daemon's lifetime.
        compact()
        return (released, nil)
    }

    /// Expires retained finishes past retention, compacts a mostly dead
    /// log, and arms the expiry timer for the next retained finish.
    private func compact() {
        do {
            try journal.compactIfNeeded()
        } catch {
            log(.warning, "journal compaction failed (not fatal: the log stays in use as it is): \(error)")
        }
        scheduleExpiry()
    }

    /// Commits expire retained finishes as they pass; this one-shot timer
    /// does it when none comes (an idle daemon would otherwise keep every
    /// finish of its last busy minute in memory). Finishes due within a
    /// second of each other expire together, so it wakes the loop at most
    /// once a second, and never when none is retained.
    private func scheduleExpiry() {
        guard expiryTimer == nil, let due = journal.nextExpiry else { return }
        let wait = Swift.max(0, due - journal.clock()) + 1000
        let timer = LoopTimer(after: .milliseconds(wait), tolerance: .milliseconds(500)) { [unowned self] _ in
            expiryTimer = nil
            compact()
        }
        expiryTimer = timer
        loop.add(timer, forMode: .common)
    }
}
