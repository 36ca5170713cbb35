import LoopPlatform
import Logging
import Synchronization

/// Job-end lines for stderr held back to be written together: one
/// `write` for a batch of the main loop's work instead of one per job.
/// Shared by every copy of a `StderrLogHandler`; any thread.
final class HeldLogLines: Sendable {
    /// Lines not written yet, whole lines only.
    private let bytes = Mutex<[UInt8]>([])
    /// Past this many bytes, `append` writes at once.
    static let limit = 1 << 16

    /// Appends a line built by `build`; returns whether nothing was held
    /// before (so a flush must be arranged). Writes at once past `limit`.
    func append(to fd: Int32, _ build: (inout [UInt8]) -> Void) -> Bool {
        bytes.withLock { held in
            let wasEmpty = held.isEmpty
            build(&held)
            if held.count >= Self.limit { Self.write(fd, &held) }
            return wasEmpty
        }
    }

    /// Writes what is held, if anything.
    func flush(to fd: Int32) {
        bytes.withLock { held in
            if !held.isEmpty { Self.write(fd, &held) }
        }
    }

    /// One write of everything held (the lock is held: lines stay in order).
    private static func write(_ fd: Int32, _ held: inout [UInt8]) {
        writeLogBytes(fd, held)
        held.removeAll(keepingCapacity: held.capacity <= 4 * limit)
    }
}

extension StderrLogHandler {
    func holdJobEnd(_ r: JobEndRecord, file: String, function: String, line: UInt) -> Bool {
        held.append(to: fileDescriptor) { appendJobEnd(r, to: &$0) }
    }

    func flushHeld() { held.flush(to: fileDescriptor) }
}
