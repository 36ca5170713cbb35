import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The whole process's getrusage(RUSAGE_SELF) at one instant: every thread's
/// CPU time and context switches, postgres-nio's event-loop thread included.
struct Usage {
    var cpuNanoseconds: Int64
    var voluntarySwitches: Int64
    var involuntarySwitches: Int64

    static func now() -> Usage {
        var u = rusage()
        _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)  // fails only for a bad `who` or pointer
        func ns(_ t: timeval) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_usec) * 1000 }
        return Usage(cpuNanoseconds: ns(u.ru_utime) + ns(u.ru_stime),
                     voluntarySwitches: Int64(u.ru_nvcsw), involuntarySwitches: Int64(u.ru_nivcsw))
    }
}

/// One measured run of one client: `count` statements after the warm-up.
struct RunResult: Sendable {
    var count: Int
    var wallNanoseconds: Int64
    var cpuNanoseconds: Int64
    var switches: Int64
    /// Each statement's latency, from the call that issued it to its
    /// completion running on the loop, nanoseconds, ascending.
    var sortedLatencies: [Int64]

    var perSecond: Double { Double(count) / (Double(wallNanoseconds) / 1e9) }
    var cpuMicrosecondsPerTrip: Double { Double(cpuNanoseconds) / 1000 / Double(count) }
    var switchesPerTrip: Double { Double(switches) / Double(count) }
    var p50Microseconds: Double { percentile(50) }
    var p99Microseconds: Double { percentile(99) }

    /// Nearest rank, microseconds.
    func percentile(_ p: Double) -> Double {
        guard !sortedLatencies.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sortedLatencies.count)).rounded(.up))
        return Double(sortedLatencies[min(max(rank, 1), sortedLatencies.count) - 1]) / 1000
    }
}

/// The median (mean of the middle two when even).
func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    guard !s.isEmpty else { return 0 }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// `value` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "–" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let rounded = (abs(value) * scale).rounded()
    let whole = Int(rounded / scale), fraction = Int(rounded.truncatingRemainder(dividingBy: scale))
    var text = (value < 0 && rounded > 0 ? "-" : "") + String(whole)
    if digits > 0 {
        let f = String(fraction)
        text += "." + String(repeating: "0", count: digits - f.count) + f
    }
    return text
}

/// A figure with about three significant digits.
func figure(_ value: Double) -> String {
    let a = abs(value)
    return fixed(value, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3)
}

/// A GitHub-style table, columns padded.
func markdownTable(_ header: [String], _ rows: [[String]]) -> String {
    let all = [header] + rows
    let widths = header.indices.map { i in all.map { $0[i].count }.max() ?? 0 }
    func line(_ cells: [String]) -> String {
        "| " + cells.enumerated().map { i, c in
            i == 0 ? c + String(repeating: " ", count: widths[i] - c.count)
                : String(repeating: " ", count: widths[i] - c.count) + c
        }.joined(separator: " | ") + " |"
    }
    let rule = "|" + widths.enumerated().map { i, w in
        i == 0 ? String(repeating: "-", count: w + 2) : String(repeating: "-", count: w + 1) + ":"
    }.joined(separator: "|") + "|"
    return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
}

/// /proc/loadavg's first three fields.
func loadAverage() -> String {
    guard case .success(let bytes) = FileSystem.readFile("/proc/loadavg", limit: 4096) else { return "?" }
    return String(decoding: bytes, as: UTF8.self).split(separator: " ").prefix(3).joined(separator: " ")
}
