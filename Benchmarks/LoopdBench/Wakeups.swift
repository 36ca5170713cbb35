// How often a server's threads sleep and are woken over a measured window:
// context switches from /proc (always), and scheduler wake-ups counted by
// `perf stat` on the kernel's sched:sched_wakeup tracepoint (when perf may
// count system-wide: root, or a low perf_event_paranoid).
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// What one server's threads did over a window. Every figure is nil when it
/// could not be counted (the report then shows —).
struct WakeCounts: Sendable {
    /// Context switches summed over the threads, from /proc/PID/task/*/status:
    /// `voluntary_ctxt_switches` (the thread blocked: one sleep, so one
    /// wake-up later) and `nonvoluntary_ctxt_switches` (it was preempted).
    var voluntary: Int?
    var involuntary: Int?
    /// sched:sched_wakeup events whose woken task is one of the server's
    /// threads: how often something had to wake the server.
    var wakeupsOfServer: Int?
    /// sched:sched_wakeup events raised while one of the server's threads ran:
    /// the wake-ups the server itself caused (of its own other threads, or
    /// of its clients). What `perf stat -e sched:sched_wakeup -p PID` counts.
    var wakeupsByServer: Int?

    static let none = WakeCounts()

    /// Voluntary + involuntary.
    var switches: Int? { voluntary.flatMap { v in involuntary.map { v + $0 } } }

    /// The sum of two windows; a figure missing from either is missing.
    static func + (a: WakeCounts, b: WakeCounts) -> WakeCounts {
        func add(_ x: Int?, _ y: Int?) -> Int? { x.flatMap { x in y.map { x + $0 } } }
        return WakeCounts(voluntary: add(a.voluntary, b.voluntary), involuntary: add(a.involuntary, b.involuntary),
                          wakeupsOfServer: add(a.wakeupsOfServer, b.wakeupsOfServer),
                          wakeupsByServer: add(a.wakeupsByServer, b.wakeupsByServer))
    }

    /// The sum of `windows` (nil figures when there are none).
    static func total(_ windows: [WakeCounts]) -> WakeCounts {
        guard let first = windows.first else { return .none }
        return windows.dropFirst().reduce(first, +)
    }
}

/// A snapshot of every thread's context switches of one process.
struct ThreadSwitches {
    /// Thread id → (voluntary, involuntary).
    let threads: [pid_t: (voluntary: Int, involuntary: Int)]

    /// Reads /proc/PID/task/*/status; nil when the process cannot be read.
    init?(pid: pid_t) {
        guard let tids = try? FileSystem.directoryEntries("/proc/\(pid)/task") else { return nil }
        var threads: [pid_t: (Int, Int)] = [:]
        for entry in tids {
            guard let tid = pid_t(entry), let status = Files.read("/proc/\(pid)/task/\(entry)/status") else { continue }
            var voluntary: Int?, involuntary: Int?
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") {
                    voluntary = Int(line.dropFirst("voluntary_ctxt_switches:".count).filter { $0 != "\t" && $0 != " " })
                } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    involuntary = Int(line.dropFirst("nonvoluntary_ctxt_switches:".count)
                        .filter { $0 != "\t" && $0 != " " })
                }
            }
            if let voluntary, let involuntary { threads[tid] = (voluntary, involuntary) }
        }
        guard !threads.isEmpty else { return nil }
        self.threads = threads
    }

    /// The switches made since `earlier`, summed over the threads alive now
    /// (a thread started in between counts in full; one that ended is lost).
    func since(_ earlier: ThreadSwitches) -> (voluntary: Int, involuntary: Int) {
        var sum = (voluntary: 0, involuntary: 0)
        for (tid, now) in threads {
            let before = earlier.threads[tid] ?? (0, 0)
            sum.voluntary += now.voluntary - before.voluntary
            sum.involuntary += now.involuntary - before.involuntary
        }
        return sum
    }
}

/// `perf stat`, if it can count scheduler tracepoints system-wide here.
/// Probed once per run; `unusable` says why not, for the report.
struct Perf: Sendable {
    let path: String

    /// The usable perf, or the reason there is none (one line).
    static func probe(directory: String) -> Result<Perf, BenchError> {
        guard let path = Files.which("perf") else {
            return .failure(BenchError("perf not found (Debian: linux-perf)"))
        }
        let perf = Perf(path: path)
        let output = directory + "/perf-probe.csv", log = directory + "/perf-probe.log"
        do throws(BenchError) {
            let pid = try Processes.spawn(path, ["stat", "-a", "-x,", "-o", output] + perf.events(threads: [processID()])
                                          + ["--", "/bin/true"], cwd: directory, logPath: log)
            guard let status = Processes.waitExit(pid, seconds: 20) else {
                Processes.stop(pid, graceSeconds: 1)
                return .failure(BenchError("`perf stat -a` did not finish within 20 s"))
            }
            guard status == "exited 0", perf.parse(Files.read(output) ?? "") != nil else {
                var why = (Files.read(log) ?? "").split(separator: "\n").first { !$0.isEmpty }.map(String.init) ?? status
                if effectiveUserID() != 0 {
                    let paranoid = Files.read("/proc/sys/kernel/perf_event_paranoid")?.filter { $0 != "\n" } ?? "?"
                    why += "; not root, kernel.perf_event_paranoid = \(paranoid)"
                }
                return .failure(BenchError("`perf stat -a -e sched:sched_wakeup` refused: \(why)"))
            }
        } catch {
            return .failure(error)
        }
        return .success(perf)
    }

    /// The events counted for `threads`: wake-ups of them, wake-ups raised
    /// while one of them ran (`common_pid`: the task current when the
    /// tracepoint fired). Tracepoint filters run in the kernel.
    func events(threads: [pid_t]) -> [String] {
        func filter(_ field: String) -> String { threads.map { "\(field) == \($0)" }.joined(separator: " || ") }
        return ["-e", "sched:sched_wakeup", "--filter", filter("pid"),
                "-e", "sched:sched_wakeup", "--filter", filter("common_pid")]
    }

    /// (of, by) from `perf stat -x,` output: one line per event, in the
    /// order given, the count first; nil when a count is missing.
    func parse(_ csv: String) -> (of: Int, by: Int)? {
        let counts = csv.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("sched:sched_wakeup") }
            .map { Int($0.prefix { $0 != "," }) }
        guard counts.count == 2, let of = counts[0], let by = counts[1] else { return nil }
        return (of, by)
    }
}

/// The run's perf (or why there is none) and the windows it counts in:
/// what every mode that counts wake-ups shares.
final class WakeWindows {
    /// The perf that counts wake-ups, or why there is none (`--no-perf`, not
    /// installed, not allowed to count system-wide).
    let perf: Result<Perf, BenchError>
    private let directory: String
    /// perf failures within windows, for the notes (the first of each kind).
    private(set) var errors: [String] = []

    /// Probes perf (unless `noPerf`); its scratch files go in `directory`.
    init(noPerf: Bool, directory: String) {
        perf = noPerf ? .failure(BenchError("--no-perf")) : Perf.probe(directory: directory)
        self.directory = directory
    }

    /// A window that counts `pid`'s switches and wake-ups (with perf when usable).
    func window(_ pid: pid_t) -> WakeWindow {
        WakeWindow(pid: pid, perf: try? perf.get(), directory: directory)
    }

    /// Keeps the first perf failure of a window for the notes.
    func note(_ window: WakeWindow) {
        if let e = window.perfError, errors.count < 3, !errors.contains(e) { errors.append(e) }
    }

    /// The report's header line on how wake-ups are counted, or why they are not.
    var headerLine: String {
        switch perf {
        case .success(let p): "- wake-ups: `\(p.path) stat -a -e sched:sched_wakeup` filtered to each server's threads"
        case .failure(let why): "- wake-ups: not counted (\(why)); context switches come from /proc"
        }
    }
}

/// Counts one server process's switches and wake-ups over one window:
/// `open()` right before the first measured request, `close()` right after
/// the last reply.
final class WakeWindow {
    private let pid: pid_t
    private let perf: Perf?
    private let directory: String
    private var before: ThreadSwitches?
    private var perfPid: pid_t = 0
    private var perfOutput = ""
    /// A failure of this window's perf, kept for the run's notes.
    private(set) var perfError: String?

    init(pid: pid_t, perf: Perf?, directory: String) {
        self.pid = pid
        self.perf = perf
        self.directory = directory
    }

    /// Starts perf (it counts system-wide, filtered to the threads alive
    /// now), then reads the threads' switches.
    func open() {
        if let perf, let threads = try? FileSystem.directoryEntries("/proc/\(pid)/task").compactMap({ pid_t($0) }),
           !threads.isEmpty {
            perfOutput = directory + "/perf-\(pid)-\(monotonicNanoseconds()).csv"
            do throws(BenchError) {
                try Files.write(perfOutput, "")
                perfPid = try Processes.spawn(perf.path, ["stat", "-a", "-x,", "-o", perfOutput]
                                                  + perf.events(threads: threads),
                                              cwd: directory, logPath: directory + "/perf.log")
                Children.perf.store(perfPid, ordering: .releasing)
                waitCounting()
            } catch {
                perfError = error.description
            }
        }
        before = ThreadSwitches(pid: pid)
    }

    /// Reads the switches again, stops perf and collects its counts.
    func close() -> WakeCounts {
        var counts = WakeCounts.none
        if let before, let after = ThreadSwitches(pid: pid) {
            let delta = after.since(before)
            counts.voluntary = delta.voluntary
            counts.involuntary = delta.involuntary
        }
        if perfPid > 0, let perf {
            SignalPlatform.sendSignal(SIGINT, toProcess: perfPid)
            let status = Processes.waitExit(perfPid, seconds: 10)
            if status == nil { Processes.stop(perfPid, graceSeconds: 1) }
            Children.perf.store(0, ordering: .releasing)
            perfPid = 0
            if let (of, by) = perf.parse(Files.read(perfOutput) ?? "") {
                counts.wakeupsOfServer = of
                counts.wakeupsByServer = by
            } else {
                perfError = "perf stat \(status ?? "did not stop") and printed no counts (see perf.log)"
            }
        }
        return counts
    }

    /// Waits until perf has opened its counters (two per CPU, which `perf
    /// stat -a` enables as it opens them): its output file says nothing
    /// until it exits, so its descriptors are the sign.
    private func waitCounting() {
        let wanted = 2 * onlineCPUCount()
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while monotonicNanoseconds() < deadline {
            if let status = Processes.exitStatus(perfPid) {
                perfError = "perf stat \(status) at start (see perf.log)"
                Children.perf.store(0, ordering: .releasing)
                perfPid = 0
                return
            }
            let fds = (try? FileSystem.directoryEntries("/proc/\(perfPid)/fd")) ?? []
            let counters = fds.filter {
                (try? FileSystem.symbolicLinkTarget("/proc/\(perfPid)/fd/\($0)")) == "anon_inode:[perf_event]"
            }
            if counters.count >= wanted { return }
            blockThread(milliseconds: 2)
        }
        perfError = "perf stat opened fewer counters than \(wanted) within 5 s"
    }
}

/// The columns of the report's table of wake-ups per job.
enum WakeColumns {
    static let names = ["measurement", "server", "jobs", "switches/job", "voluntary + involuntary",
                        "wake-ups of server/job", "wake-ups by server/job", "server CPU/job"]

    /// `count ÷ jobs` with two decimals; — when either is missing.
    static func perJob(_ count: Int?, _ jobs: Int) -> String {
        guard let count, jobs > 0 else { return "—" }
        return Format.fixed(Double(count) / Double(jobs), 2)
    }

    static func row(_ name: String, server: String, jobs: Int, wakes: WakeCounts, cpuSeconds: Double?) -> [String] {
        let switches = wakes.switches
        let split = jobs > 0 && switches != nil
            ? perJob(wakes.voluntary, jobs) + " + " + perJob(wakes.involuntary, jobs) : "—"
        let cpu = cpuSeconds.flatMap { jobs > 0 ? Format.fixed($0 / Double(jobs) * 1e6, 1) + " µs" : nil } ?? "—"
        return [name, server, jobs > 0 ? Format.count(Double(jobs)) : "—", perJob(switches, jobs), split,
                perJob(wakes.wakeupsOfServer, jobs), perJob(wakes.wakeupsByServer, jobs), cpu]
    }
}
