/// What keeps jobs beyond this process. The scheduler holds every job's
/// life in memory (`JobTable`); a store keeps what must outlive the process
/// or be read by other hosts, and writes what one pass of the main loop
/// told it in one group commit at the end of that pass.
///
/// Two stores implement it:
/// - `JournalStore`, the local journal: durable jobs, replayed at the next
///   start; its commit is one write and one fsync.
/// - `FleetStore`, PostgreSQL: the attempts of fleet jobs this node claimed;
///   its commit is one fenced `UPDATE` of every end.
///
/// A job has at most one store (`JobScheduler.store(of:)`): the fleet's if
/// it runs a fleet job's attempt, the journal's if it is durable, none
/// otherwise. Main thread only.
protocol JobStore: AnyObject {
    /// From now on the store answers for `job` as it stands: its request
    /// and the attempts it has had. Told when a job is accepted (not when
    /// it is replayed from the store itself) and when a failed attempt is
    /// followed by another.
    func keep(_ job: Job)

    /// `job` ended with `end`; its fields hold the outcome and the times.
    func keepEnd(of job: Job, _ end: Job.End)

    /// The end of a job this store answers for and the job table no longer
    /// holds (it ended before a restart), or nil.
    func finished(id: String) -> FinishedJob?
}
