// `--pin CPU`: the whole run on one CPU. Set on the benchmark's own threads
// before it starts any child, so every child (loopd, beanstalkd, redis, perf)
// inherits the set through fork and exec, and every thread they start
// inherits it from theirs.
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Which CPUs the run's processes may use, set with `--pin` and read back
/// with sched_getaffinity for the report, so the header states the regime
/// actually in force, not the one asked for.
enum Affinity {
    /// Confines every thread of this process alive now to `cpu`; threads it
    /// starts later inherit that from their creator. Run it first thing in
    /// `main`, when the only thread is the main one, but every thread of
    /// /proc/self/task is done anyway, in case the runtime started one.
    static func pin(to cpu: Int) throws(BenchError) {
        let allowed = (try? cpus(ofThread: 0)) ?? []
        guard allowed.contains(cpu) else {
            throw BenchError("--pin \(cpu): this process may only use CPUs \(list(allowed))")
        }
        for tid in threads(of: processID()) {
            do {
                try CPUAffinity.restrict(thread: tid, to: CPUSet([cpu]))
            } catch {
                throw BenchError("sched_setaffinity of thread \(tid) to CPU \(cpu): \(errnoText(error.errno))")
            }
        }
    }

    /// The CPUs thread `tid` (0: the caller) may run on, ascending.
    static func cpus(ofThread tid: pid_t) throws(BenchError) -> [Int] {
        do {
            return try CPUAffinity.allowed(thread: tid).members
        } catch {
            throw BenchError("sched_getaffinity of thread \(tid): \(errnoText(error.errno))")
        }
    }

    /// The CPUs every thread of process `pid` may run on, as a list
    /// ("0", "0-1"); the distinct sets joined by " / " when its threads
    /// differ, which a pinned run must never show.
    static func describe(process pid: pid_t) -> String {
        var sets: [[Int]] = []
        for tid in threads(of: pid) {
            guard let set = try? cpus(ofThread: tid) else { continue }  // the thread ended meanwhile
            if !sets.contains(set) { sets.append(set) }
        }
        guard !sets.isEmpty else { return "unreadable" }
        return sets.map(list).joined(separator: " / ") + (sets.count > 1 ? " (its threads differ)" : "")
    }

    /// The report's header line: the regime (`pinned`) and the CPUs each of
    /// `processes` (name, pid) is allowed, read back now.
    static func headerLine(pinned: Int?, processes: [(name: String, pid: pid_t)]) -> String {
        let sets = processes.map { "\($0.name) \(describe(process: $0.pid))" }.joined(separator: ", ")
        let regime = pinned.map { "pinned, `--pin \($0)`: every process of the run confined to CPU \($0)" }
            ?? "unpinned (no `--pin`): the scheduler places every thread"
        return "- CPU affinity: \(regime); sched_getaffinity of every thread now: \(sets)"
    }

    /// The thread ids of process `pid` (/proc/PID/task); just `pid` when
    /// they cannot be listed.
    private static func threads(of pid: pid_t) -> [pid_t] {
        let tids = ((try? FileSystem.directoryEntries("/proc/\(pid)/task")) ?? []).compactMap { pid_t($0) }
        return tids.isEmpty ? [pid] : tids.sorted()
    }

    /// CPU numbers as the kernel writes lists: runs as ranges, "0-3,6".
    static func list(_ cpus: [Int]) -> String {
        var parts: [String] = []
        var k = 0
        while k < cpus.count {
            var end = k
            while end + 1 < cpus.count && cpus[end + 1] == cpus[end] + 1 { end += 1 }
            parts.append(end == k ? "\(cpus[k])" : "\(cpus[k])-\(cpus[end])")
            k = end + 1
        }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}
