/// The lifecycle of a job.
public enum JobState: String, Sendable, CaseIterable {
    /// Accepted, waiting in its worker's queue (or for its mode, or for its delay).
    case queued
    /// Its delay has not passed yet.
    case delayed
    /// Its worker is running it.
    case running
    /// It finished successfully.
    case completed
    /// It finished with an error (including a timeout).
    case failed
    /// It was cancelled before it ran.
    case cancelled

    /// Whether the job has reached an end state.
    public var isFinal: Bool { self == .completed || self == .failed || self == .cancelled }
}

/// Builds response lines.
public enum Response {
    /// `{"id":…,"ok":true,…fields}` as one line with its newline.
    public static func ok(id: RequestID?, _ fields: [(String, JSON)] = []) -> String {
        var members: [(String, JSON)] = [("id", id?.json ?? .null), ("ok", .bool(true))]
        members.append(contentsOf: fields)
        var line = JSON.object(members).serialized()
        line += "\n"
        return line
    }

    /// `{"id":…,"ok":false,"error":{"code":…,"message":…}}` as one line with its newline.
    public static func error(id: RequestID?, _ error: ProtocolError, _ fields: [(String, JSON)] = []) -> String {
        var members: [(String, JSON)] = [("id", id?.json ?? .null), ("ok", .bool(false)), ("error", error.json)]
        members.append(contentsOf: fields)
        var line = JSON.object(members).serialized()
        line += "\n"
        return line
    }
}
