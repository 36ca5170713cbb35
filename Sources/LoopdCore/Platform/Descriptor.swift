import Glibc

/// Calls on a descriptor the caller already holds, whatever it is (socket,
/// pipe, regular file): the one read(2) and close(2) of the daemon. Any
/// thread, on a descriptor that thread owns; nothing here keeps state.
enum Descriptor {
    /// Outcome of a read.
    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case endOfFile
        case failed(Int32)
    }

    /// One read(2) into `buffer`, retrying EINTR. `wouldBlock` only on a
    /// non-blocking descriptor with nothing to read yet.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
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

    /// close(2), never retried: Linux releases the descriptor even when it
    /// reports EINTR or EIO, so a retry could close someone else's. Returns
    /// the error it reported, for callers that treat `EBADF` as their bug.
    @discardableResult
    static func close(_ fd: Int32) -> SystemError? {
        Glibc.close(fd) == -1 ? SystemError("close", errno: errno) : nil
    }
}
