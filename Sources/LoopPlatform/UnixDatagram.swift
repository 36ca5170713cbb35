import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// An `AF_UNIX` socket address, as handed to or returned by the kernel.
public struct UnixAddress: Sendable {
    public var storage = sockaddr_un()
    public var length = socklen_t(0)

    /// The most bytes a name may have after the leading NUL of the abstract
    /// namespace (`sun_path` is 108 bytes on Linux).
    public static let abstractNameCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    public init() {}

    /// An address in Linux's abstract namespace: `sun_path` is a NUL byte
    /// followed by `name` (no terminator; the length says where it ends).
    /// Such a name has no filesystem node, lives as long as the socket bound
    /// to it, and is visible to every process in the network namespace.
    public init(abstract name: [UInt8]) {
        precondition(name.count <= UnixAddress.abstractNameCapacity, "an abstract socket name is at most 107 bytes")
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { path in
            path[0] = 0
            for (i, byte) in name.enumerated() { path[i + 1] = byte }
        }
        length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.count)
    }

    /// Whether the address names a socket (an unbound sender's address is
    /// just the family, and nothing can be sent back to it).
    public var isNamed: Bool { length > socklen_t(MemoryLayout<sa_family_t>.size) }
}

/// One datagram taken from a socket.
public struct ReceivedDatagram {
    /// The datagram's real length; larger than the buffer when it was truncated.
    public var length: Int
    /// Who sent it.
    public var sender: UnixAddress
    /// The sending process's uid, as the kernel vouches for it; nil unless
    /// the socket asked for credentials (`enableSenderCredentials`).
    public var senderUID: UInt32?
}

/// A `SOCK_DGRAM` `AF_UNIX` socket, non-blocking and close-on-exec. The kernel
/// keeps datagram boundaries and refuses a send when the receiver's queue is
/// full (`net.unix.max_dgram_qlen`), which is what a message port needs.
///
/// Not thread-safe: its owner serializes every call, including `close()`.
public final class UnixDatagramSocket {
    /// The descriptor; -1 once closed.
    public private(set) var fd: Int32

    public init() throws(PlatformError) {
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        fd = try retryingInterrupts("socket(AF_UNIX, SOCK_DGRAM)") { socket(AF_UNIX, type, 0) }
    }

    deinit { close() }

    /// Closes the descriptor (and so frees the name it was bound to). Idempotent.
    public func close() {
        guard fd >= 0 else { return }
        Descriptor.closeOwned(fd)
        fd = -1
    }

    /// Stops the socket receiving: a later send to it fails (`EPIPE`, which
    /// `isPeerGone` counts) even while another process still holds a copy of
    /// the descriptor, as a child does between `fork` and `exec`, and so
    /// keeps the socket and its name alive after `close`. What was queued
    /// before stays readable.
    public func shutdownReading() {
        guard fd >= 0 else { return }
        _ = Glibc.shutdown(fd, Int32(SHUT_RD))
    }

    /// Binds to `address`; `EADDRINUSE` means another socket holds the name.
    public func bind(to address: UnixAddress) throws(PlatformError) {
        var a = address
        _ = try retryingInterrupts("bind") {
            withUnsafePointer(to: &a.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, a.length) }
            }
        }
    }

    /// Has the kernel attach each sender's credentials to the datagrams
    /// this socket receives (`SO_PASSCRED`); `receive` reports the uid.
    public func enableSenderCredentials() throws(PlatformError) {
        var on: Int32 = 1
        _ = try retryingInterrupts("setsockopt(SO_PASSCRED)") {
            setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Binds to a fresh abstract name the kernel picks (Linux "autobind"), so
    /// a peer can send datagrams back.
    public func bindAutomatically() throws(PlatformError) {
        var a = UnixAddress()
        a.storage.sun_family = sa_family_t(AF_UNIX)
        a.length = socklen_t(MemoryLayout<sa_family_t>.size)
        try bind(to: a)
    }

    /// Fixes the destination of `send` and limits receiving to that peer.
    /// `ECONNREFUSED` means no socket is bound to the address. On a connected
    /// socket `poll(POLLOUT)` also waits for room in the peer's queue, which
    /// an unconnected one cannot do.
    public func connect(to address: UnixAddress) throws(PlatformError) {
        var a = address
        _ = try retryingInterrupts("connect") {
            withUnsafePointer(to: &a.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, a.length) }
            }
        }
    }

    /// Sends one datagram to the connected peer, or to `destination`.
    /// Returns false when it would block (a full queue); throws other errors
    /// (`ECONNREFUSED`/`ENOTCONN`: the peer is gone; `EMSGSIZE`: too large).
    public func send(_ bytes: UnsafeRawBufferPointer, to destination: UnixAddress? = nil) throws(PlatformError) -> Bool {
        let flags = Int32(MSG_NOSIGNAL)
        while true {
            let n: Int
            if var d = destination {
                n = withUnsafePointer(to: &d.storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, flags, $0, d.length)
                    }
                }
            } else {
                n = Glibc.send(fd, bytes.baseAddress, bytes.count, flags)
            }
            if n >= 0 { return true }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN: return false
            case EBADF, EFAULT: fatalError("send was handed a bad descriptor or address (errno \(code)): a LoopRuntime bug")
            default: throw PlatformError(call: "send", errno: code)
            }
        }
    }

    /// Takes one datagram into `buffer` (with `peek`, leaves it queued).
    /// Returns nil when none is queued. The length reported is the
    /// datagram's real one (`MSG_TRUNC`), so a caller can tell that it did
    /// not fit.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, peek: Bool = false) throws(PlatformError) -> ReceivedDatagram? {
        let flags = Int32(MSG_TRUNC) | (peek ? Int32(MSG_PEEK) : 0)
        var sender = UnixAddress()
        var uid: UInt32 = 0
        var hasUID: Int32 = 0
        while true {
            sender.length = socklen_t(MemoryLayout<sockaddr_un>.size)
            let n = cloop_recv_with_uid(fd, buffer.baseAddress, buffer.count, flags, &sender.storage, &sender.length,
                                        &uid, &hasUID)
            if n >= 0 { return ReceivedDatagram(length: n, sender: sender, senderUID: hasUID != 0 ? uid : nil) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN: return nil
            case EBADF, EFAULT: fatalError("recvmsg was handed a bad descriptor or address (errno \(code)): a LoopRuntime bug")
            default: throw PlatformError(call: "recvmsg", errno: code)
            }
        }
    }

    /// Blocks in `poll` until the socket is readable (or, with `writable`,
    /// can take a datagram) or the monotonic clock reaches `deadline`
    /// (nanoseconds). Returns false on timeout. An error or hang-up counts
    /// as ready, so the caller's next call reports it. No polling loop: one
    /// `poll` per wait, again only after `EINTR` or a millisecond rounding
    /// short of the deadline.
    public func wait(writable: Bool = false, untilMonotonic deadline: UInt64) throws(PlatformError) -> Bool {
        let wanted = Int16(writable ? POLLOUT : POLLIN)
        while true {
            let now = monotonicNanoseconds()
            let remaining = deadline > now ? deadline - now : 0
            // Round up, so the wait never ends early; clamp to poll's Int32.
            let ms = Int32(clamping: (remaining + 999_999) / 1_000_000)
            var entry = pollfd(fd: fd, events: wanted, revents: 0)
            let r = poll(&entry, 1, ms)
            if r > 0 { return true }
            if r == -1 {
                let code = errno
                if code == EINTR { continue }
                throw PlatformError(call: "poll", errno: code)
            }
            if monotonicNanoseconds() >= deadline { return false }
        }
    }
}

extension PlatformError {
    /// `bind`: another socket holds the address.
    public var isAddressInUse: Bool { errno == EADDRINUSE }
    /// `connect`/`send`: no socket is bound at the address, or the connected
    /// peer has closed (the first send after that reports `ECONNREFUSED`,
    /// later ones `ENOTCONN`) or stopped receiving (`EPIPE`).
    public var isPeerGone: Bool { errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOENT || errno == EPIPE }
    /// `send`: the datagram does not fit the socket buffer.
    public var isMessageTooLarge: Bool { errno == EMSGSIZE }
}

