#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The only place in loopctl that calls the kernel: a blocking Unix stream
/// socket, plus the few process facts the CLI needs (environment, file
/// existence, writing to fds 1 and 2, the wall clock). Every call retries `EINTR` and reads
/// `errno` at once, before anything else can overwrite it.
enum UnixSocket {
    /// Opens a blocking `AF_UNIX` stream socket connected to `path`.
    static func open(path: String) throws(ClientError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        // The kernel needs the path NUL-terminated inside sun_path; a longer
        // path would be silently cut, so it is refused here instead.
        guard !pathBytes.isEmpty, pathBytes.count < capacity else {
            throw ClientError.cannotConnect(path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }

        #if os(Linux)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        if fd == -1 { throw ClientError.cannotConnect(path: path, errno: errno) }

        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        while true {
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
            }
            if rc == 0 { return fd }
            let code = errno
            // An interrupted connect keeps going in the kernel; asking again
            // reports EISCONN once it has finished, which is success.
            if code == EINTR { continue }
            if code == EISCONN { return fd }
            _ = close(fd)
            throw ClientError.cannotConnect(path: path, errno: code)
        }
    }

    /// Makes reads on `fd` give up after `milliseconds` (they then fail with
    /// `EAGAIN`, reported by `read` as a protocol error).
    static func setReceiveTimeout(_ fd: Int32, milliseconds: Int) {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: .init((milliseconds % 1000) * 1000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`. A peer that has gone away is `closed`; the
    /// write never raises SIGPIPE (`MSG_NOSIGNAL`), so the CLI can say so.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, noSignal)
            }
            if n >= 0 { offset += n; continue }
            let code = errno
            switch code {
            case EINTR: continue
            case EPIPE, ECONNRESET: throw ClientError.closed
            default: throw ClientError.protocol("cannot write to the daemon: \(describe(errno: code))")
            }
        }
    }

    /// Reads what is available into `buffer`; 0 means the daemon closed the
    /// connection.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(ClientError) -> Int {
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return n }
            let code = errno
            switch code {
            case EINTR: continue
            // A daemon that closes with our bytes unread resets the
            // connection; to the user that is the same as closing it.
            case ECONNRESET: throw ClientError.closed
            case EAGAIN, EWOULDBLOCK: throw ClientError.protocol("no reply from the daemon in time")
            default: throw ClientError.protocol("cannot read from the daemon: \(describe(errno: code))")
            }
        }
    }

    /// Closes a descriptor this module opened.
    static func closeDescriptor(_ fd: Int32) {
        _ = close(fd)
    }

    /// `strerror`, as a Swift string.
    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Whether anything exists at `path` (`access(F_OK)`).
    static func fileExists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The process environment variable `name`.
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Writes `text` unbuffered to the process's fd 1 or 2. Unbuffered, so
    /// nothing is lost when the CLI calls `exit` right after.
    static func writeStandard(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress! + offset, raw.count - offset) }
            if n > 0 { offset += n } else if n == -1 && errno == EINTR { continue } else { return }
        }
    }

    /// The wall clock (`CLOCK_REALTIME`) in Unix milliseconds.
    static func currentTimeUnixMs() -> Int64 {
        var now = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Ends the process with `status`.
    static func exitProcess(_ status: Int32) -> Never {
        exit(status)
    }

    #if os(Linux)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let noSignal: Int32 = 0
    #endif
}
