import Glibc

/// Calls on a descriptor the caller already holds, whatever it is (socket,
/// pipe, regular file): read(2) and close(2), and the positioned I/O, sync
/// and size calls of files. Any thread, on a descriptor that thread owns;
/// nothing here keeps state.
public enum Descriptor {
    /// Outcome of a read.
    public enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case endOfFile
        case failed(Int32)
    }

    /// One read(2) into `buffer`, retrying EINTR. `wouldBlock` only on a
    /// non-blocking descriptor with nothing to read yet.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfFile }
            switch errno {
            case EINTR: continue
            case EAGAIN: return .wouldBlock
            case let e: return .failed(e)
            }
        }
    }

    /// Reads `count` bytes from `offset` with pread(2), looping over short
    /// reads; fewer bytes only at end of file.
    public static func read(_ fd: Int32, count: Int, at offset: Int) throws(PlatformError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        // `withUnsafe…Bytes` rethrows untyped errors, so carry ours out as a Result.
        let done = try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(PlatformError) in
                var done = 0
                while done < count {
                    let n = try retryingInterrupts("pread") { pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done)) }
                    if n == 0 { break }
                    done += n
                }
                return done
            }
        }.get()
        bytes.removeLast(count - done)
        return bytes
    }

    /// Writes all of `bytes` at `offset` with pwrite(2), looping over short
    /// writes (a disk that fills mid-call returns a short count, then
    /// `ENOSPC`). Returns the number of pwrite calls made.
    public static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) throws(PlatformError) -> Int {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(PlatformError) in
                var done = 0
                var calls = 0
                while done < raw.count {
                    calls += 1
                    done += try retryingInterrupts("pwrite") { pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done)) }
                }
                return calls
            }
        }.get()
    }

    /// fdatasync(2): the data, and the size that reaches it, are on stable storage.
    public static func syncData(_ fd: Int32) throws(PlatformError) {
        _ = try retryingInterrupts("fdatasync") { fdatasync(fd) }
    }

    /// ftruncate(2) to `length` bytes.
    public static func truncate(_ fd: Int32, to length: Int) throws(PlatformError) {
        _ = try retryingInterrupts("ftruncate") { ftruncate(fd, off_t(length)) }
    }

    /// What fstat(2) says of a descriptor, as far as the daemon asks.
    public struct Status: Sendable {
        public var size: Int
        public var device: UInt64
        public var inode: UInt64
    }

    /// fstat(2) of `fd`.
    public static func status(_ fd: Int32) throws(PlatformError) -> Status {
        var info = stat()
        _ = try retryingInterrupts("fstat") { fstat(fd, &info) }
        return Status(size: Int(info.st_size), device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Makes an inherited descriptor non-blocking and close-on-exec (fcntl),
    /// best effort.
    public static func setNonBlockingAndCloseOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// close(2), never retried: Linux releases the descriptor even when it
    /// reports EINTR or EIO, so a retry could close someone else's. Returns
    /// the error it reported, for callers that treat `EBADF` as their bug.
    @discardableResult
    public static func close(_ fd: Int32) -> PlatformError? {
        Glibc.close(fd) == -1 ? PlatformError(call: "close", errno: errno) : nil
    }

    /// Closes a descriptor the caller owns and nobody else closes. `EBADF`
    /// means it was closed twice, which is a bug: it traps, because the
    /// number may by now belong to another file of the process.
    public static func closeOwned(_ fd: Int32) {
        if Glibc.close(fd) == -1 && errno == EBADF {
            fatalError("close(\(fd)) of a descriptor that was not open")
        }
    }
}
