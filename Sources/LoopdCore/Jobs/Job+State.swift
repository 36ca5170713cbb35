import LoopdProtocol

extension Job {
    /// A job's life, as the main thread knows it:
    ///
    /// ```
    /// accepted ─┬─► awaitingCommit ─┬─► delayed ─┬─► running ─► ended ─► forgotten
    ///           │                   └─► queued ──┘      ▲
    ///           └──────────────────────► (same) ────────┘
    /// ```
    ///
    /// Any state before `ended` may end: a cancel, a failed commit, or an
    /// end its lane reports for a job the main thread had not yet seen
    /// start. A failed attempt that will be retried goes back from
    /// `delayed`, `queued` or `running` to `awaitingCommit` (durable),
    /// `delayed` (its backoff) or `queued`. `queued` covers held jobs (their
    /// worker's mode does not admit them; see `visibleState`).
    enum State: Equatable, CustomStringConvertible {
        /// Checked and given an id; not yet anywhere.
        case accepted
        /// Waiting for the journal commit that makes it (or a durable job
        /// ahead of it on its worker) durable.
        case awaitingCommit
        /// In the scheduler's delay heap (`JobScheduler.delays`), which
        /// moves it to `queued` when its delay has passed.
        case delayed
        /// Handed to its worker's lane.
        case queued
        /// Its lane reported that it started.
        case running
        /// Recorded: counted, logged, journaled, answered; kept for `status`
        /// while it is among the most recent finished jobs.
        case ended(End)
        /// Out of the retention window: nothing refers to it any more.
        case forgotten

        var isEnded: Bool {
            if case .ended = self { return true }
            return false
        }

        /// Whether a job may go from `self` to `next`.
        func allows(_ next: State) -> Bool {
            switch (self, next) {
            case (.accepted, .awaitingCommit), (.accepted, .delayed), (.accepted, .queued),
                 (.awaitingCommit, .delayed), (.awaitingCommit, .queued),
                 (.delayed, .running), (.queued, .running),
                 (.ended, .forgotten):
                return true
            case (.running, .ended(.expired)):
                return false  // only a job that has not started expires
            case (.accepted, .ended), (.awaitingCommit, .ended), (.delayed, .ended), (.queued, .ended), (.running, .ended):
                return true
            case (.delayed, .awaitingCommit), (.queued, .awaitingCommit), (.running, .awaitingCommit),
                 (.delayed, .delayed), (.queued, .delayed), (.running, .delayed),
                 (.delayed, .queued), (.queued, .queued), (.running, .queued):
                // A failed attempt that will be retried (`JobScheduler.retry`): its
                // lane may report the end before the main thread saw it start.
                return true
            default:
                return false
            }
        }

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .awaitingCommit: "awaiting commit"
            case .delayed: "delayed"
            case .queued: "queued"
            case .running: "running"
            case .ended(let end): "ended \(end.protocolState.rawValue)"
            case .forgotten: "forgotten"
            }
        }
    }

    /// How a job ended.
    enum End: Equatable {
        case completed
        case failed
        case timedOut
        case cancelled
        /// Its expiry passed before it started (`JobScheduler+Expiry`).
        case expired

        /// The end an action's outcome means.
        init(_ outcome: ActionOutcome) {
            switch outcome {
            case .success: self = .completed
            case .failure(let e, _):
                switch e.code {
                case .timeout: self = .timedOut
                case .cancelled: self = .cancelled
                case .expired: self = .expired
                default: self = .failed
                }
            }
        }

        /// A failure an operator may want to look at and retry (`JobState.isFailure`).
        var isFailure: Bool { protocolState.isFailure }

        var protocolState: JobState {
            switch self {
            case .completed: .completed
            case .failed: .failed
            case .timedOut: .timedOut
            case .cancelled: .cancelled
            case .expired: .expired
            }
        }
    }
}
