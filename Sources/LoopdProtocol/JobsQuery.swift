/// What a `jobs` request asks for: which jobs, and which page of them.
/// Every filter is optional; the jobs listed match all the filters given.
public struct JobsQuery: Sendable, Equatable {
    /// The page size when the request names none.
    public static let defaultLimit = 100
    /// The largest page a request may ask for.
    public static let maxLimit = 1000
    /// At most this many states in `state` (there are no more states than this).
    public static let maxStates = JobState.allCases.count
    /// The longest `cursor`, in bytes.
    public static let maxCursorBytes = 256

    /// Only jobs in one of these states; nil: every state.
    public var states: [JobState]?
    /// Only jobs placed on this worker.
    public var worker: String?
    /// Only jobs of this action.
    public var action: String?
    /// Only jobs submitted at or after this instant (Unix milliseconds).
    public var submittedSinceUnixMs: Int64?
    /// At most this many jobs in the reply, `1...JobsQuery.maxLimit`.
    public var limit: Int
    /// Where the page starts: a previous reply's `next_cursor`, opaque to
    /// everyone but the daemon that made it. nil: the oldest job.
    public var cursor: String?
    /// `fleet`: list the fleet's jobs (from the fleet's database) instead of this host's.
    public var fleet = false
    /// `with_fleet`: list this host's jobs and the fleet's together, in the
    /// order they were submitted (the attempts of fleet jobs this host ran
    /// are listed once, as their fleet jobs).
    public var withFleet = false

    /// Creates a query; with no arguments, the first page of every job.
    public init(states: [JobState]? = nil, worker: String? = nil, action: String? = nil,
                submittedSinceUnixMs: Int64? = nil, limit: Int = JobsQuery.defaultLimit, cursor: String? = nil) {
        precondition((1...JobsQuery.maxLimit).contains(limit), "a jobs query's limit must be in 1...\(JobsQuery.maxLimit), not \(limit)")
        self.states = states
        self.worker = worker
        self.action = action
        self.submittedSinceUnixMs = submittedSinceUnixMs
        self.limit = limit
        self.cursor = cursor
    }
}
