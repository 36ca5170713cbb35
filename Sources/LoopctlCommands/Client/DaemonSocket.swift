import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// loopctl's side of the daemon's socket: LoopPlatform's blocking Unix
/// stream calls, with each kernel failure turned into the `ClientError` the
/// user is told about.
enum DaemonSocket {
    /// Opens a blocking stream socket connected to `path`.
    static func open(path: String) throws(ClientError) -> Int32 {
        do {
            return try UnixSocket.connect(path: path, nonBlocking: false)
        } catch {
            throw ClientError.cannotConnect(path: path, errno: error.errno)
        }
    }

    /// Makes reads on `fd` give up after `milliseconds` (then reported by
    /// `read` as a protocol error).
    static func setReceiveTimeout(_ fd: Int32, milliseconds: Int) {
        UnixSocket.setTimeout(fd, milliseconds: milliseconds)
    }

    /// Writes all of `bytes`. A peer that has gone away is `closed`.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(ClientError) {
        // `withUnsafeBytes` rethrows untyped errors, so carry ours out as a Result.
        let written = bytes.withUnsafeBytes { raw in
            Result { () throws(PlatformError) in try UnixSocket.writeAll(fd, raw) }
        }
        guard case .failure(let error) = written else { return }
        switch error.errno {
        case EPIPE, ECONNRESET: throw ClientError.closed
        default: throw ClientError.protocol("cannot write to the daemon: \(errnoText(error.errno))")
        }
    }

    /// Reads what is available into `buffer`; 0 means the daemon closed the
    /// connection.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(ClientError) -> Int {
        do {
            return try UnixSocket.receive(fd, into: buffer)
        } catch {
            switch error.errno {
            // A daemon that closes with our bytes unread resets the
            // connection; to the user that is the same as closing it.
            case ECONNRESET: throw ClientError.closed
            case EAGAIN: throw ClientError.protocol("no reply from the daemon in time")
            default: throw ClientError.protocol("cannot read from the daemon: \(errnoText(error.errno))")
            }
        }
    }
}
