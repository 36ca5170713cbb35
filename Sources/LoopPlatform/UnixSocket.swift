import CLoopShims
import Glibc

/// `AF_UNIX` stream sockets: the daemon's listening and accepted ones
/// (non-blocking from birth) and a client's (blocking, with optional
/// time-outs). Every descriptor is CLOEXEC. Reading from a non-blocking one
/// and closing any are `Descriptor`'s, as for any descriptor.
public enum UnixSocket {
    /// Who is on the other end of a connection (SO_PEERCRED, SO_PEERGROUPS).
    public struct Peer: Sendable, Equatable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
        /// Supplementary groups when it connected; empty if the kernel
        /// cannot tell (SO_PEERGROUPS needs Linux 4.13).
        public var groups: [UInt32] = []
    }

    private static func address(_ path: String, for call: String) throws(PlatformError) -> (sockaddr_un, socklen_t) {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw PlatformError(call: call, errno: ENAMETOOLONG, detail: path)
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return (addr, len)
    }

    private static func streamSocket() throws(PlatformError) -> Int32 {
        try retryingInterrupts("socket") {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
    }

    /// Binds and listens on `path`. A stale node (nobody accepting) is
    /// replaced; a live one means another daemon runs there: EADDRINUSE.
    public static func listen(path: String, mode: UInt32, group: UInt32?, backlog: Int32 = 1024) throws(PlatformError) -> Int32 {
        let fd = try streamSocket()
        var (addr, len) = try address(path, for: "bind")
        func bindOnce() -> Int32 {
            withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        }
        if bindOnce() == -1 {
            let e = errno
            guard e == EADDRINUSE, !isAlive(path: path) else {
                Descriptor.close(fd)
                throw PlatformError(call: "bind", errno: e, detail: path)
            }
            try? FileSystem.removeIfPresent(path)
            if bindOnce() == -1 {
                let e2 = errno
                Descriptor.close(fd)
                throw PlatformError(call: "bind", errno: e2, detail: path)
            }
        }
        if let group, chown(path, UInt32.max, group) == -1 {
            let e = errno
            Descriptor.close(fd)
            throw PlatformError(call: "chown", errno: e, detail: path)
        }
        if chmod(path, mode_t(mode)) == -1 {
            let e = errno
            Descriptor.close(fd)
            throw PlatformError(call: "chmod", errno: e, detail: path)
        }
        if Glibc.listen(fd, backlog) == -1 {
            let e = errno
            Descriptor.close(fd)
            throw PlatformError(call: "listen", errno: e, detail: path)
        }
        return fd
    }

    /// Whether something accepts connections at `path`.
    public static func isAlive(path: String) -> Bool {
        guard let fd = try? connect(path: path, nonBlocking: false) else { return false }
        Descriptor.close(fd)
        return true
    }

    /// Connects to `path` (blocking unless asked otherwise). A blocking
    /// connect interrupted by a signal goes on in the kernel; asking again
    /// reports `EISCONN` once it has finished, which is success.
    ///
    /// `timeoutMilliseconds`, for a blocking socket: set (as `setTimeout`
    /// with `sending`) before connecting, so that neither the connect, when
    /// the listener's backlog is full, nor any later read or write blocks
    /// longer; each then fails with `EAGAIN`.
    public static func connect(path: String, nonBlocking: Bool = true, timeoutMilliseconds: Int? = nil) throws(PlatformError) -> Int32 {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
        let fd = try retryingInterrupts("socket") { socket(AF_UNIX, flags, 0) }
        if let timeoutMilliseconds { setTimeout(fd, milliseconds: timeoutMilliseconds, sending: true) }
        do throws(PlatformError) {
            var (addr, len) = try address(path, for: "connect")
            while true {
                let r = withUnsafePointer(to: &addr) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, len) }
                }
                if r == 0 { return fd }
                switch errno {
                case EINTR: continue
                case EISCONN, EINPROGRESS: return fd
                case let e: throw PlatformError(call: "connect", errno: e, detail: path)
                }
            }
        } catch {
            Descriptor.close(fd)
            throw error
        }
    }

    /// Makes blocking reads (and, with `sending`, writes) on `fd` give up
    /// after `milliseconds`: they then fail with `EAGAIN`.
    public static func setTimeout(_ fd: Int32, milliseconds: Int, sending: Bool = false) {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: .init((milliseconds % 1000) * 1000))
        let size = socklen_t(MemoryLayout<timeval>.size)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, size)
        if sending { _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, size) }
    }

    /// Writes all of `bytes` to a blocking socket. Never raises SIGPIPE:
    /// a peer that has gone reports `EPIPE` or `ECONNRESET`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(PlatformError) {
        var offset = 0
        while offset < bytes.count {
            offset += try retryingInterrupts("send") {
                send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// One blocking recv(2) into `buffer`; 0 means the peer closed.
    public static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(PlatformError) -> Int {
        try retryingInterrupts("recv") { recv(fd, buffer.baseAddress, buffer.count, 0) }
    }

    /// Accepts one connection; nil when none is pending.
    public static func accept(_ listener: Int32) throws(PlatformError) -> Int32? {
        while true {
            let fd = cloop_accept4(listener, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { return fd }
            switch errno {
            case EINTR: continue
            case EAGAIN, ECONNABORTED: return nil
            case let e: throw PlatformError(call: "accept4", errno: e)
            }
        }
    }

    public static func peer(_ fd: Int32) -> Peer? {
        var pid: Int32 = 0, uid: UInt32 = 0, gid: UInt32 = 0
        guard cloop_peercred(fd, &pid, &uid, &gid) == 0 else { return nil }
        return Peer(pid: pid, uid: uid, gid: gid, groups: peerGroups(fd))
    }

    /// The peer's supplementary groups (SO_PEERGROUPS), so `allow_groups`
    /// admits a member through any of its groups, not only its primary one
    /// (bug: supplementary-groups-ignored). Empty when the kernel cannot say.
    public static func peerGroups(_ fd: Int32) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 32)
        // Two tries: the kernel answers ERANGE with the length it needs.
        for _ in 0..<2 {
            var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            let r = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, $0.baseAddress, &length) }
            if r == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size)) }
            guard errno == ERANGE else { return [] }
            groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size + 1)
        }
        return []
    }

    /// Writes what the socket takes now; returns the count, 0 if it would
    /// block, or the errno of a dead peer. Never raises SIGPIPE.
    public static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Result<Int, PlatformError> {
        while true {
            let n = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if n >= 0 { return .success(n) }
            switch errno {
            case EINTR: continue
            case EAGAIN: return .success(0)
            case let e: return .failure(PlatformError(call: "send", errno: e))
            }
        }
    }

    /// Whether the peer of a connected socket has closed it entirely (both
    /// directions: `close`, not a `shutdown(SHUT_WR)` that still reads
    /// replies), by a poll(2) that does not wait. Seen after end of file:
    /// there is then nobody left to answer.
    public static func peerHasClosed(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while true {
            let n = poll(&p, 1, 0)
            if n >= 0 { return n == 1 && p.revents & Int16(POLLHUP | POLLERR) != 0 }
            guard errno == EINTR else { return false }
        }
    }
}
