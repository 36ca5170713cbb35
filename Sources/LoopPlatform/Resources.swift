#if canImport(Glibc)
import Glibc
#endif

/// CPU time used, as getrusage(2) counts it. Any thread.
public enum ResourceUsage {
    /// Whose time to count.
    public enum Whose {
        /// Every thread of this process.
        case process
        /// This process's children that have ended and been reaped.
        case reapedChildren
    }

    /// User plus system CPU time of `whose`, in nanoseconds (the kernel
    /// reports microseconds).
    public static func cpuNanoseconds(_ whose: Whose = .process) -> Int64 {
        var usage = rusage()
        let who = whose == .process ? RUSAGE_SELF : RUSAGE_CHILDREN
        // Fails only for an unknown `who` or a bad pointer, neither possible here.
        _ = getrusage(__rusage_who_t(who.rawValue), &usage)
        func ns(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1000 }
        return ns(usage.ru_utime) + ns(usage.ru_stime)
    }
}

/// Clock ticks per second (sysconf `_SC_CLK_TCK`): the unit of the CPU
/// times in /proc/PID/stat and /proc/stat.
public func clockTicksPerSecond() -> Int { sysconf(Int32(_SC_CLK_TCK)) }

/// The running kernel's release, e.g. `"6.1.0-18-amd64"` (uname(2)).
public func kernelRelease() -> String {
    var name = utsname()
    _ = uname(&name)
    return withUnsafeBytes(of: name.release) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
}
