import LoopPlatform

/// Reads a small /proc file whole; nil if it cannot be read.
func readProcFile(_ path: String) -> String? {
    guard case .success(let bytes) = FileSystem.readFile(path, limit: 1 << 20) else { return nil }
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
func processCPUNanoseconds() -> Int64 { ResourceUsage.cpuNanoseconds(.process) }

/// Pins every thread of the process to one CPU, the in-process equivalent of
/// `taskset -c 0` (threads created afterwards inherit their creator's mask,
/// so Dispatch's pool threads are pinned too); `restore()` undoes it.
enum Affinity {
    /// The CPUs the process may run on, as read at start-up.
    nonisolated(unsafe) private static var original = CPUSet()
    nonisolated(unsafe) private static var saved = false

    /// Number of CPUs this process may use.
    static var allowedCPUs: Int {
        (try? CPUAffinity.allowed().count) ?? 1
    }

    /// Pins all threads to `cpu`. Main thread only.
    static func pinAll(to cpu: Int) {
        if !saved {
            original = (try? CPUAffinity.allowed()) ?? CPUSet()
            saved = true
        }
        apply(CPUSet([cpu]))
    }

    /// Gives every thread the start-up mask back. Main thread only.
    static func restore() {
        guard saved else { return }
        apply(original)
    }

    private static func apply(_ cpus: CPUSet) {
        for tid in threadIDs() {
            try? CPUAffinity.restrict(thread: tid, to: cpus)
        }
    }

    /// Kernel ids of this process's threads.
    static func threadIDs() -> [Int32] {
        ((try? FileSystem.directoryEntries("/proc/self/task")) ?? []).compactMap { Int32($0) }
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
        return busy * (1_000_000_000 / Int64(clockTicksPerSecond()))
    }

    /// CPU time of this process and its reaped children (the RSS probes), nanoseconds.
    static func ownNanoseconds() -> Int64 {
        processCPUNanoseconds() + ResourceUsage.cpuNanoseconds(.reapedChildren)
    }
}
