import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Reads CLOCK_MONOTONIC in nanoseconds.
@inlinable @inline(__always)
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Reads CLOCK_MONOTONIC_COARSE (a few ms resolution, a few ns to read): good
/// enough for stall stamps measured in seconds.
@inlinable @inline(__always)
public func coarseMonotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}
