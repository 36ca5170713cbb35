import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Tells the CPU this thread is busy-waiting (x86 `pause`), so a spin
/// costs less power and yields the core's pipeline to a sibling thread.
@inlinable @inline(__always)
public func relaxCPU() { cloop_cpu_relax() }

/// Offers this thread's CPU to another runnable thread (`sched_yield`);
/// returns at once when none is waiting.
@inlinable @inline(__always)
public func yieldCPU() { _ = sched_yield() }

/// The number of CPUs online now (sysconf `_SC_NPROCESSORS_ONLN`), which
/// may be more than this process is allowed to use (`CPUAffinity`).
public func onlineCPUCount() -> Int { sysconf(Int32(_SC_NPROCESSORS_ONLN)) }

/// A set of CPUs by number (`cpu_set_t`): where a thread may run.
public struct CPUSet: Sendable {
    fileprivate var raw = cpu_set_t()

    /// The empty set.
    public init() {}

    /// The set holding exactly `cpus`.
    public init(_ cpus: some Sequence<Int>) {
        for cpu in cpus { insert(cpu) }
    }

    /// Adds CPU `cpu` (0 up to the kernel's 1024).
    public mutating func insert(_ cpu: Int) {
        precondition(cpu >= 0 && cpu < MemoryLayout<cpu_set_t>.size * 8, "no CPU \(cpu) in a cpu_set_t")
        withUnsafeMutableBytes(of: &raw) { $0[cpu / 8] |= UInt8(1 << (cpu % 8)) }
    }

    /// The CPUs the set holds, ascending.
    public var members: [Int] {
        withUnsafeBytes(of: raw) { bytes in (0..<bytes.count * 8).filter { bytes[$0 / 8] & UInt8(1 << ($0 % 8)) != 0 } }
    }

    /// How many CPUs the set holds.
    public var count: Int {
        withUnsafeBytes(of: raw) { $0.reduce(0) { $0 + $1.nonzeroBitCount } }
    }
}

/// Which CPUs a thread may run on (sched_getaffinity, sched_setaffinity).
/// A thread starts with its creator's set. Any thread, for any thread of
/// the process by its kernel id (`currentThreadID()`; 0: the caller).
public enum CPUAffinity {
    /// The CPUs thread `tid` may run on.
    public static func allowed(thread tid: pid_t = 0) throws(PlatformError) -> CPUSet {
        var set = CPUSet()
        _ = try retryingInterrupts("sched_getaffinity") { cloop_sched_getaffinity(tid, &set.raw) }
        return set
    }

    /// Lets thread `tid` run on `cpus` only.
    public static func restrict(thread tid: pid_t, to cpus: CPUSet) throws(PlatformError) {
        var raw = cpus.raw
        _ = try retryingInterrupts("sched_setaffinity") { cloop_sched_setaffinity(tid, &raw) }
    }
}
