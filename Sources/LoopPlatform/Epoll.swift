import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Readiness a source can be interested in.
public struct IOInterest: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Data can be read (or the peer hung up).
    public static let readable = IOInterest(rawValue: UInt32(EPOLLIN.rawValue))
    /// Data can be written without blocking.
    public static let writable = IOInterest(rawValue: UInt32(EPOLLOUT.rawValue))
}

/// One delivered readiness event.
public struct ReadinessEvent {
    public var token: UInt64
    public var readable: Bool
    public var writable: Bool
    /// Error or hang-up: reported so the owner reads and sees EOF or the error.
    public var hangup: Bool

    @inlinable
    public init(token: UInt64, readable: Bool, writable: Bool, hangup: Bool) {
        self.token = token
        self.readable = readable
        self.writable = writable
        self.hangup = hangup
    }
}

/// The epoll instance of one loop. Level-triggered throughout: a source
/// outside the running mode is simply not registered, and its readiness is
/// still there when it is registered again (R5).
public final class Epoll: @unchecked Sendable {
    // Immutable after init; epoll_ctl and epoll_wait are thread-safe in the kernel.
    public let fd: Int32
    @usableFromInline let buffer: UnsafeMutablePointer<cloop_event>  // loop thread only
    @usableFromInline let capacity = 64

    public init() throws(PlatformError) {
        fd = try retryingInterrupts("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
        Descriptor.closeOwned(fd)
    }

    /// Watches `target`. `edgeTriggered`: report each new readiness once
    /// instead of for as long as it lasts (for the loop's own wake-up
    /// eventfd, which then needs no read to rearm).
    public func add(_ target: Int32, interest: IOInterest, token: UInt64, edgeTriggered: Bool = false) throws(PlatformError) {
        let events = interest.rawValue | (edgeTriggered ? UInt32(EPOLLET.rawValue) : 0)
        _ = try retryingInterrupts("epoll_ctl(ADD)") {
            cloop_epoll_ctl(fd, EPOLL_CTL_ADD, target, events, token)
        }
    }

    public func modify(_ target: Int32, interest: IOInterest, token: UInt64) throws(PlatformError) {
        _ = try retryingInterrupts("epoll_ctl(MOD)") {
            cloop_epoll_ctl(fd, EPOLL_CTL_MOD, target, interest.rawValue, token)
        }
    }

    /// Removes `target`; a descriptor the owner already closed is not an error
    /// (the kernel dropped it from the set with its last close).
    public func remove(_ target: Int32) {
        if cloop_epoll_ctl(fd, EPOLL_CTL_DEL, target, 0, 0) == -1 {
            let code = errno
            precondition(code == ENOENT || code == EBADF, "epoll_ctl(DEL) failed with errno \(code)")
        }
    }

    /// Waits up to `timeoutMilliseconds` (-1: forever, 0: poll) and hands each
    /// event to `body`. Returns the number of events.
    @inlinable @discardableResult
    public func wait(timeoutMilliseconds: Int32, _ body: (ReadinessEvent) -> Void) throws(PlatformError) -> Int {
        let n: Int32
        let r = cloop_epoll_wait(fd, buffer, Int32(capacity), timeoutMilliseconds)
        if r == -1 {
            let code = errno
            if code == EINTR { return 0 }  // a signal: treat as a spurious wake-up
            throw PlatformError(call: "epoll_wait", errno: code)
        }
        n = r
        for i in 0..<Int(n) {
            let e = buffer[i]
            body(ReadinessEvent(
                token: e.token,
                readable: e.events & UInt32(EPOLLIN.rawValue) != 0,
                writable: e.events & UInt32(EPOLLOUT.rawValue) != 0,
                hangup: e.events & (UInt32(EPOLLERR.rawValue) | UInt32(EPOLLHUP.rawValue)) != 0))
        }
        return Int(n)
    }
}
