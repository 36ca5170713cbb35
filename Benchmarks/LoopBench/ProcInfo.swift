#if canImport(Glibc)
import Glibc
#endif

/// Reads a small /proc file whole; nil if it cannot be opened.
func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The value of a "Key:   123 kB" line of a /proc status file.
private func statusField(_ text: String, _ key: String) -> Int? {
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        return Int(line.dropFirst(key.count + 1).split(whereSeparator: \.isWhitespace).first ?? "")
    }
    return nil
}

/// What the kernel's scheduler knows about one thread, at one instant.
struct ThreadSample {
    /// Time spent on a CPU (schedstat field 1), nanoseconds.
    var cpuNanoseconds: Int64
    /// Times the thread was put on a CPU (schedstat field 3).
    var timeslices: Int64
    /// Times it gave up the CPU by blocking: each idle wake-up costs one.
    var voluntarySwitches: Int64

    /// Samples thread `tid` of this process; nil if it is gone.
    init?(tid: Int32) {
        guard let sched = readProcFile("/proc/self/task/\(tid)/schedstat"),
              let status = readProcFile("/proc/self/task/\(tid)/status") else { return nil }
        let fields = sched.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int64($0) }
        guard fields.count >= 3, let voluntary = statusField(status, "voluntary_ctxt_switches") else { return nil }
        cpuNanoseconds = fields[0]
        timeslices = fields[2]
        voluntarySwitches = Int64(voluntary)
    }
}

/// This process's resident memory, from /proc/self/status.
struct MemorySample {
    /// VmRSS in bytes.
    var resident: Int
    /// RssAnon in bytes (heap and stacks, not mapped files).
    var anonymous: Int

    init() {
        let status = readProcFile("/proc/self/status") ?? ""
        resident = (statusField(status, "VmRSS") ?? 0) * 1024
        anonymous = (statusField(status, "RssAnon") ?? 0) * 1024
    }
}

/// User + system CPU time of the whole process, nanoseconds.
func processCPUNanoseconds() -> Int64 {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func ns(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1000 }
    return ns(usage.ru_utime) + ns(usage.ru_stime)
}

/// Pins every thread of the process to one CPU, the in-process equivalent of
/// `taskset -c 0` (threads created afterwards inherit their creator's mask,
/// so Dispatch's pool threads are pinned too); `restore()` undoes it.
enum Affinity {
    /// The CPUs the process may run on, as read at start-up.
    nonisolated(unsafe) private static var original = cpu_set_t()
    nonisolated(unsafe) private static var saved = false

    /// Number of CPUs this process may use.
    static var allowedCPUs: Int {
        var set = cpu_set_t()
        guard GNU.getAffinity(0, &set) == 0 else { return 1 }
        return withUnsafeBytes(of: &set) { $0.reduce(0) { $0 + $1.nonzeroBitCount } }
    }

    /// Pins all threads to `cpu`. Main thread only.
    static func pinAll(to cpu: Int) {
        if !saved {
            _ = GNU.getAffinity(0, &original)
            saved = true
        }
        var one = cpu_set_t()
        withUnsafeMutableBytes(of: &one) { $0[cpu / 8] |= UInt8(1 << (cpu % 8)) }
        apply(one)
    }

    /// Gives every thread the start-up mask back. Main thread only.
    static func restore() {
        guard saved else { return }
        apply(original)
    }

    private static func apply(_ mask: cpu_set_t) {
        var mask = mask
        for tid in threadIDs() {
            _ = GNU.setAffinity(tid, &mask)
        }
    }

    /// Kernel ids of this process's threads.
    static func threadIDs() -> [Int32] {
        guard let dir = opendir("/proc/self/task") else { return [] }
        defer { closedir(dir) }
        var ids: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if let id = Int32(name) { ids.append(id) }
        }
        return ids
    }
}

/// glibc's CPU-affinity calls, which Swift's Glibc module does not import
/// (they need `_GNU_SOURCE`), looked up once with dlsym. CLoopShims could
/// declare them instead; until it does, the benchmark finds them itself.
enum GNU {
    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutablePointer<cpu_set_t>) -> Int32

    private static func lookup<F>(_ name: String, as: F.Type) -> F {
        guard let symbol = dlsym(nil, name) else { fatalError("glibc has no \(name)") }
        return unsafeBitCast(symbol, to: F.self)
    }

    private static let sched_getaffinity = lookup("sched_getaffinity", as: AffinityCall.self)
    private static let sched_setaffinity = lookup("sched_setaffinity", as: AffinityCall.self)

    /// sched_getaffinity(2) of thread `tid` (0: the caller); 0 on success.
    static func getAffinity(_ tid: pid_t, _ set: inout cpu_set_t) -> Int32 {
        sched_getaffinity(tid, MemoryLayout<cpu_set_t>.size, &set)
    }

    /// sched_setaffinity(2) of thread `tid`; 0 on success.
    static func setAffinity(_ tid: pid_t, _ set: inout cpu_set_t) -> Int32 {
        sched_setaffinity(tid, MemoryLayout<cpu_set_t>.size, &set)
    }
}

/// How busy the machine is apart from us: the benchmark shares 2 CPUs with
/// whatever else runs (a compiler, say), which skews every figure.
enum MachineLoad {
    /// The 1-minute load average.
    static var loadAverage: Double {
        Double(readProcFile("/proc/loadavg")?.split(separator: " ").first ?? "") ?? 0
    }

    /// CPU time all processes have used since boot (user+nice+system+irq+softirq+steal), nanoseconds.
    static func busyNanoseconds() -> Int64 {
        guard let line = readProcFile("/proc/stat")?.split(separator: "\n").first else { return 0 }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
        guard ticks.count >= 8 else { return 0 }
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]  // skips idle, iowait
        return busy * (1_000_000_000 / Int64(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// CPU time of this process and its reaped children (the RSS probes), nanoseconds.
    static func ownNanoseconds() -> Int64 {
        var children = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &children)
        func ns(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1000 }
        return processCPUNanoseconds() + ns(children.ru_utime) + ns(children.ru_stime)
    }
}
