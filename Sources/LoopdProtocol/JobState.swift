/// The lifecycle of a job (docs/PROTOCOL.md, "States").
public enum JobState: String, Sendable, CaseIterable {
    /// Its delay has not passed yet.
    case delayed
    /// Accepted, waiting in its worker's queue.
    case queued
    /// Queued on a worker whose current run mode does not admit the job; it
    /// starts once the worker runs a mode that does.
    case held
    /// Its worker is running it.
    case running
    /// It finished successfully.
    case completed
    /// It ran and failed.
    case failed
    /// It ran past its timeout and was stopped (error code `timeout`).
    case timedOut = "timed_out"
    /// It was cancelled, before it ran or while it ran.
    case cancelled
    /// Its `expires_in_ms` passed before it started (queued, held or
    /// delayed): it never ran (error code `expired`).
    case expired

    /// `rawValue` as a literal: what a reply or a log line writes for the
    /// state, copied as it is, with no `String` made or scanned for escapes.
    @inlinable
    public var literal: StaticString {
        switch self {
        case .delayed: "delayed"
        case .queued: "queued"
        case .held: "held"
        case .running: "running"
        case .completed: "completed"
        case .failed: "failed"
        case .timedOut: "timed_out"
        case .cancelled: "cancelled"
        case .expired: "expired"
        }
    }

    /// Whether the job has reached an end state: completed, failed, timed
    /// out, cancelled or expired.
    public var isFinal: Bool {
        switch self {
        case .delayed, .queued, .held, .running: false
        case .completed, .failed, .timedOut, .cancelled, .expired: true
        }
    }

    /// Whether it is a failure an operator may want to look at and retry:
    /// the job failed, timed out or expired (a cancel was asked for).
    public var isFailure: Bool { self == .failed || self == .timedOut || self == .expired }

    /// The failure states, in declaration order.
    public static let failures: [JobState] = allCases.filter(\.isFailure)
}
