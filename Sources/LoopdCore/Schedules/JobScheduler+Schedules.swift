import LoopPlatform
import LoopdProtocol

/// Schedules submit their jobs as loopd itself: its own uid owns them, so
/// every action is permitted and administrators manage them. Main thread only.
extension JobScheduler: ScheduleRunner {
    func submitRun(of schedule: DaemonConfig.Schedule, slot: Int64?) -> Result<String, ProtocolError> {
        do {
            let job = try accept(schedule.job, submitter: scheduleSubmitter, jobID: nil, submittedAt: unixMilliseconds())
            dispatch(job, ack: nil)
            return .success(job.id)
        } catch {
            return .failure(error)
        }
    }

    func state(ofJob id: String) -> JobState? {
        // What a lane reported counts: a lazy end waits in the mailbox for a
        // request or the lag timer, and the schedule's timer is neither.
        recordReports()
        if let job = table[id] { return job.visibleState() }
        return journal?.finishedStatus(id: id).flatMap { JobState(rawValue: $0.state) }
    }

    func cancelRun(_ id: String) {
        guard let job = table[id], !job.state.isEnded else { return }
        _ = stop(job, by: daemonUID)
    }
}
