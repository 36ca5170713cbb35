/// One failed attempt of a job that may retry: which, why, and when it
/// ended. Kept on the job (the last `limit`), in its journal records, and
/// shown by `status`.
public struct AttemptRecord: Sendable, Equatable {
    /// How many failed attempts a job keeps: the most recent ones.
    public static let limit = 8

    /// Which attempt, from 1.
    public var attempt: Int
    /// The error code it ended with (`job_failed`, `timeout`).
    public var code: String
    /// The error's message.
    public var message: String
    /// When it ended, Unix milliseconds.
    public var endedAt: Int64

    public init(attempt: Int, code: String, message: String, endedAt: Int64) {
        self.attempt = attempt
        self.code = code
        self.message = message
        self.endedAt = endedAt
    }

    /// Appends `record` to `records`, keeping the last `limit`.
    static func append(_ record: AttemptRecord, to records: inout [AttemptRecord]) {
        records.append(record)
        if records.count > limit { records.removeFirst(records.count - limit) }
    }
}

extension ByteWriter {
    /// `u32 count · (u32 attempt · str code · str message · i64 endedAt)×count`
    mutating func attempts(_ records: [AttemptRecord]) {
        u32(UInt32(records.count))
        for r in records {
            u32(UInt32(truncatingIfNeeded: r.attempt))
            string(r.code)
            string(r.message)
            i64(r.endedAt)
        }
    }
}

extension ByteReader {
    /// The list `ByteWriter.attempts` wrote; nil when malformed.
    mutating func attempts() -> [AttemptRecord]? {
        guard let count = u32(), count <= UInt32(AttemptRecord.limit) else { return nil }
        var records: [AttemptRecord] = []
        for _ in 0..<count {
            guard let attempt = u32(), let code = string(), let message = string(), let endedAt = i64() else { return nil }
            records.append(AttemptRecord(attempt: Int(attempt), code: code, message: message, endedAt: endedAt))
        }
        return records
    }
}
