import CLoopShims
import Glibc

/// What this process may do to the processes it starts: switch them to
/// another user, signal them, confine them with Landlock. Read once at
/// start and on reload; any thread.
public enum Privileges {
    /// Linux capability numbers (capability.h).
    public enum Capability: Int {
        case kill = 5
        case setgid = 6
        case setuid = 7
    }

    /// Whether the effective set holds `capability` (`CapEff` of
    /// /proc/self/status). Root without a reduced bounding set holds them all.
    public static func has(_ capability: Capability) -> Bool {
        guard case .success(let bytes) = FileSystem.readFile("/proc/self/status", limit: 1 << 16) else { return false }
        let status = String(decoding: bytes, as: UTF8.self)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.dropFirst("CapEff:".count).trimmingWhitespace(), radix: 16) else { return false }
        return mask & (1 << UInt64(capability.rawValue)) != 0
    }

    /// Makes the process dumpable again (prctl(2) `PR_SET_DUMPABLE`) if it
    /// is not: the kernel clears the flag when a process's credentials
    /// change, as they do when a service manager starts it as another user
    /// with ambient capabilities. A process that is not dumpable cannot be
    /// read by its own user: neither by Swift's crash backtracer, which the
    /// runtime starts as that user, nor through /proc. Returns whether it
    /// had to.
    @discardableResult
    public static func restoreDumpable() -> Bool {
        cloop_restore_dumpable() == 1
    }

    /// The Landlock ABI version the kernel offers; 0 without Landlock (an
    /// older kernel, Landlock left out of the boot's LSM list, or a
    /// seccomp filter that refuses its calls).
    public static var landlockABI: Int32 { cloop_landlock_abi() }
}
