import LoopPlatform

/// Why the durable-job journal could not do what was asked.
///
/// The daemon answers durable submits that hit any of these with the
/// `journal_unavailable` error code; non-durable jobs are unaffected.
public enum JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The storage refused a call: `ENOSPC`, `EDQUOT` and `EFBIG` (full),
    /// `EIO` (media), `EROFS` (read-only), `EACCES`, …. Nothing half-written
    /// is left behind; a later call may succeed once the cause is gone.
    case unavailable(errno: Int32, path: String)
    /// The file at `path` is not a journal this version can read (its header
    /// is wrong, `offset` 0), or committed data in it has changed: the
    /// record at byte `offset` is bad and intact records follow it.
    /// Start-up refuses it rather than overwrite someone's data or drop
    /// acknowledged jobs; what a crash mid-commit leaves never raises this
    /// (see `JobJournal.init`). `JournalSalvage` repairs the second kind.
    case corrupt(path: String, offset: Int, reason: String)
    /// A submit record would be larger than `JournalRecord.maxPayloadBytes`
    /// (only possible with a request line limit above it). The commit that
    /// meets it fails as a whole, without I/O.
    case recordTooLarge(id: String, bytes: Int)

    public var description: String {
        switch self {
        case let .unavailable(code, path):
            return "journal unavailable: \(path): \(errnoText(code)) (errno \(code))"
        case let .corrupt(path, offset, reason):
            return "journal \(path) is corrupt at byte \(offset): \(reason)"
        case let .recordTooLarge(id, bytes):
            return "journal record for job \(id) is \(bytes) bytes, over the \(JournalRecord.maxPayloadBytes)-byte limit"
        }
    }
}
