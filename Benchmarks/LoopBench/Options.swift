import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// The benchmark's sections, in the order they run.
enum Section: String, CaseIterable {
    case throughput, pingpong, timers, idle

    /// One line for `--help`.
    var summary: String {
        switch self {
        case .throughput: "(a) 1 producer → 1 resident thread, empty blocks per second"
        case .pingpong: "(b) round trip between two resident threads, p50/p99, unpinned and pinned"
        case .timers: "(c) lateness of a 10 ms repeating timer over 3 s, p50/p99/max, median of 3 rounds"
        case .idle: "(d) wake-ups and CPU of an idle loop; RSS of 8 idle loop threads"
        }
    }

    func run(_ options: Options) -> (MarkdownTable, [TargetCheck]) {
        let quick = options.quick
        switch self {
        case .throughput:
            return ThroughputBenchmark(blocks: quick ? 100_000 : 1_000_000,
                                       repetitions: options.repetitions ?? (quick ? 3 : 5),
                                       budgetSeconds: quick ? 1.5 : 8).run()
        case .pingpong:
            return PingPongBenchmark(rounds: quick ? 2_000 : 20_000, warmUpRounds: quick ? 100 : 1_000,
                                     budgetSeconds: quick ? 1 : 3).run()
        case .timers:
            return TimerLatenessBenchmark(seconds: quick ? 0.5 : 3, concurrent: !options.sequentialTimers,
                                          rounds: quick ? 1 : 3).run()
        case .idle:
            return IdleBenchmark(seconds: quick ? 1 : 5).run()
        }
    }
}

/// Command-line options:
/// `LoopBench [--quick] [--strict] [--sequential-timers] [--repetitions N] [SECTION ...]`.
struct Options {
    var quick = false
    /// (a)'s rounds; nil: 5, or 3 with `--quick`.
    var repetitions: Int?
    var strict = false
    var sequentialTimers = false
    var sections: [Section] = Section.allCases

    /// Why parsing stopped: a usage error, or `--help`.
    struct Stop: Error {
        let message: String
        let exitCode: Int32
    }

    static let usage = """
        usage: swift run -c release LoopBench [--quick] [--strict] [--sequential-timers] [--repetitions N] [SECTION ...]

          --quick              reduced sizes (CI smoke, well under 60 s); ratios are rougher
          --strict             exit 1 when any target is missed
          --sequential-timers  (c) runs the timers one by one instead of all at once, staggered
          --repetitions N      (a) runs N interleaved rounds (default 5, quick 3); medians are reported
          SECTION              one or more of: \(Section.allCases.map(\.rawValue).joined(separator: " ")) (default: all)

        \(Section.allCases.map { "  \($0.rawValue.padding(12))\($0.summary)" }.joined(separator: "\n"))

        For a pinned whole run: taskset -c 0 swift run -c release LoopBench
        (section pingpong also pins in-process on its own).
        """

    static func parse(_ arguments: [String]) -> Result<Options, Stop> {
        var options = Options()
        var chosen: [Section] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--quick": options.quick = true
            case "--strict": options.strict = true
            case "--sequential-timers": options.sequentialTimers = true
            case "--repetitions":
                guard let value = rest.popFirst(), let n = Int(value), n > 0 else {
                    return .failure(Stop(message: "--repetitions needs a positive count\n\n" + usage, exitCode: 2))
                }
                options.repetitions = n
            case "-h", "--help": return .failure(Stop(message: usage, exitCode: 0))
            default:
                guard let section = Section(rawValue: argument) else {
                    return .failure(Stop(message: "unknown argument '\(argument)'\n\n" + usage, exitCode: 2))
                }
                if !chosen.contains(section) { chosen.append(section) }
            }
        }
        if !chosen.isEmpty { options.sections = Section.allCases.filter(chosen.contains) }
        return .success(options)
    }

    /// The lines printed before the first table: what, where, how big.
    func header() -> String {
        let kernel = kernelRelease()
        let load = MachineLoad.loadAverage
        let policy = schedulingPolicy()
        let policyName = policy == SCHED_FIFO ? "SCHED_FIFO" : policy == SCHED_RR ? "SCHED_RR" : "SCHED_OTHER"
        let realTime = policy == SCHED_FIFO || policy == SCHED_RR
            ? "\nNOTE: real-time policy \(policyName) (chrt): shields the run from other processes, "
                + "but 'default scheduling' then means \(policyName), not the kernel's usual fair scheduler.\n"
            : ""
        let warning = load > 0.5
            ? "\nWARNING: load average \(Format.fixed(load, 2)): other processes compete for the CPUs; figures will be noisy.\n"
            : ""
        return """
            ## LoopBench (\(quick ? "quick" : "full") run)

            Linux \(kernel), \(Affinity.allowedCPUs) CPUs allowed, load average \(Format.fixed(load, 2)), \
            \(policyName), nice \(niceValue()), \
            sections: \(sections.map(\.rawValue).joined(separator: ", ")).
            Figures are only comparable within this run; the ratio columns are the result.
            \(warning)\(realTime)
            """
    }
}

extension String {
    /// Left-aligned in a field of `width` characters.
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
