#if canImport(Glibc)
import Glibc
#endif

/// poll(2) over a fixed list of descriptors: for one thread that drives a
/// few connections without an epoll instance. The list is built once and
/// waited on again and again; readiness is level-triggered, as with poll.
/// One thread at a time (it is a value the caller owns).
public struct PollSet {
    private var entries: [pollfd]

    /// Watches each of `descriptors`, by index, for `interest`.
    public init(_ descriptors: [Int32], interest: IOInterest) {
        let events = (interest.contains(.readable) ? Int16(POLLIN) : 0) | (interest.contains(.writable) ? Int16(POLLOUT) : 0)
        entries = descriptors.map { pollfd(fd: $0, events: events, revents: 0) }
    }

    /// How many descriptors the set watches.
    public var count: Int { entries.count }

    /// Waits up to `timeoutMilliseconds` (-1: for ever) until at least one
    /// descriptor is ready; returns how many are, 0 when the time ran out.
    /// A signal restarts the wait with the whole time-out.
    public mutating func wait(timeoutMilliseconds: Int32) throws(PlatformError) -> Int {
        Int(try retryingInterrupts("poll") {
            entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        })
    }

    /// Whether descriptor `index` was ready at the last `wait`: as asked,
    /// or hung up or in error (a read then sees end of file or the error).
    public func isReady(_ index: Int) -> Bool { entries[index].revents != 0 }
}
