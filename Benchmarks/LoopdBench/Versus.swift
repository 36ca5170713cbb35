// `LoopdBench --versus-beanstalkd`: loopd and beanstalkd 1.12, the job queue
// it is most often weighed against, in the same four workloads, measured
// back to back in every round: what a job costs each (CPU, context switches,
// wake-ups) as well as how many go through a second.
import LoopPlatform

/// The four workloads of `--versus-beanstalkd` on both servers, in rounds;
/// in each round a scenario's two measurements run one right after the
/// other (loopd first in odd rounds, beanstalkd first in even ones), so the
/// machine's drift hits both alike and each round gives a pair to divide.
final class VersusBench {
    /// The servers compared.
    enum Server: String, CaseIterable {
        case loopd, beanstalkd
    }

    let options: Options
    let rounds: Int
    /// submit1, cycle1, submit50, cycle50: loopd's scenarios, which also say
    /// what beanstalkd's clients do (`runBeanstalk`).
    let scenarios: [Scenario]

    private var directory = ""
    private var loopd: LoopdProcess?
    /// The beanstalkd of the measurement under way: a fresh one each time.
    private var beanstalk: BeanstalkReference?
    private lazy var windows = WakeWindows(noPerf: options.noPerf, directory: directory)
    /// Each server's runs of each scenario (by key), `round` set.
    private var measured: [Server: [String: [Measurement]]] = [:]
    /// loopd's CPU seconds after each submit run's last acknowledgement, until
    /// it was idle (counted in the run's CPU), by scenario key; for the notes.
    private var drainCPU: [String: Double] = [:]
    private var errors: [String] = []
    private var skipped = 0
    /// Measurements start only while the run is within this many seconds
    /// (the watchdog kills the run at 58 s quick / 290 s full).
    private let budgetSeconds: Double
    private var runStart: UInt64 = 0

    private var remainingSeconds: Double { budgetSeconds - Double(monotonicNanoseconds() - runStart) / 1e9 }

    init(_ options: Options) {
        self.options = options
        rounds = options.rounds ?? (options.quick ? 1 : 5)
        budgetSeconds = options.quick ? 45 : 240
        let seconds: Double = options.quick ? 1 : 3
        /// A scenario of `clients` sequential clients; `waited`: the whole cycle.
        func scenario(_ key: String, _ name: String, clients: Int, waited: Bool) -> Scenario {
            var s = Scenario(key: key, name: name, clients: clients, depth: 1, durable: false, seconds: seconds,
                             warmup: (clients == 1 ? 1000 : 100) / (options.quick ? 5 : 1))
            s.waited = waited
            return s
        }
        scenarios = [
            scenario("submit1", "submit1 (1 client, sequential, submit not waited)", clients: 1, waited: false),
            scenario("cycle1", "cycle1 (1 client, sequential, whole job cycle)", clients: 1, waited: true),
            scenario("submit50", "submit50 (50 clients, sequential each, submit not waited)", clients: 50,
                     waited: false),
            scenario("cycle50", "cycle50 (50 clients, sequential each, whole job cycle)", clients: 50, waited: true),
        ]
    }

    /// The process exit status: 1 when a measurement failed or a server is
    /// missing, else 0.
    func run() -> Int32 {
        runStart = monotonicNanoseconds()
        let loadBefore = Processes.loadAverage()
        let binary = options.loopdBinary
        guard Files.isExecutable(binary) else {
            writeStandard(2, "LoopdBench: no loopd at \(binary) (build it, or name one with --loopd PATH)\n")
            return 1
        }
        defer { cleanUp() }
        let daemon: LoopdProcess, first: BeanstalkReference
        do throws(BenchError) {
            directory = try Files.makeTempDirectory(base: options.tmpBase, prefix: "loopd-versus-")
            daemon = try LoopdProcess(binary: binary, directory: directory, workers: 2, logLevel: options.logLevel)
            loopd = daemon
            first = try restartBeanstalkd()
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
        header(binary: binary, daemon: daemon, beanstalk: first, load: loadBefore)
        for round in 1...rounds {
            progress("round \(round) of \(rounds)")
            let order = round % 2 == 1 ? Server.allCases : Server.allCases.reversed()
            for scenario in scenarios {
                guard remainingSeconds > 2 * scenario.seconds + 10 else {
                    skipped += 1
                    progress("\(scenario.key): skipped (time budget of \(Int(budgetSeconds)) s used up)")
                    continue
                }
                for server in order { measure(scenario, on: server, round: round) }
            }
        }
        report()
        out("- load average after: \(Processes.loadAverage()); the run took "
            + "\(Format.fixed(Double(monotonicNanoseconds() - runStart) / 1e9, 1)) s.")
        if !errors.isEmpty {
            out("\nErrors:")
            for e in errors { out("- \(e)") }
        }
        return errors.isEmpty ? 0 : 1
    }

    /// The report's title and the conditions of the run, the CPU sets read
    /// back from the running processes.
    private func header(binary: String, daemon: LoopdProcess, beanstalk: BeanstalkReference, load: String) {
        var flags = ["--versus-beanstalkd"]
        if options.quick { flags.append("--quick") }
        if let cpu = options.pin { flags.append("--pin \(cpu)") }
        out("## loopd beside beanstalkd (\(flags.joined(separator: ", ")))\n")
        out(Affinity.headerLine(pinned: options.pin, processes: [("benchmark", processID()), ("loopd", daemon.pid),
                                                                  ("beanstalkd", beanstalk.pid)]))
        out("- loopd: `\(binary)` (pid \(daemon.pid)), 2 workers, journal fsync on, log_level "
            + "\(options.logLevel ?? "default (info: a record per job, to a file)"), state dir on "
            + "\(Files.fileSystemName(directory)) (`\(directory)`)")
        out("- beanstalkd: \(beanstalk.version) on a Unix socket, no binlog, a fresh one for each of its "
            + "measurements (its queue starts empty, as loopd's does: the benchmark waits until loopd is idle)")
        out("- clients: 1 client: a blocking connection, read for each reply; 50 clients: one thread polling all "
            + "50 connections (as redis-benchmark -c 50 does), for both servers"
            + (options.threadPerClient ? "; loopd's 50 with a thread each (`--thread-per-client`)" : ""))
        out(windows.headerLine)
        let seconds = scenarios.first.map { Format.fixed($0.seconds, 0) } ?? "?"
        out("- \(onlineCPUCount()) CPUs, load average before: \(load); \(rounds) round(s) of \(seconds) s per "
            + "measurement, medians reported\n")
    }

    // MARK: Measurements

    /// Measures `scenario` on `server` for round `round`, keeping the
    /// measurement, or the error.
    private func measure(_ scenario: Scenario, on server: Server, round: Int) {
        do throws(BenchError) {
            var m = switch server {
            case .loopd: try measureLoopd(scenario)
            case .beanstalkd: try measureBeanstalkd(scenario)
            }
            m.round = round
            measured[server, default: [:]][scenario.key, default: []].append(m)
            let p = Percentiles(m.latencies)
            progress("\(server) \(scenario.key): \(Format.count(m.rate)) jobs/s, \(Self.cpuPerJob(m)) CPU/job, "
                     + "\(WakeColumns.perJob(m.wakes.switches, m.jobs)) switches/job, p50 "
                     + "\(Format.latency(p.percentile(50))), p99 \(Format.latency(p.percentile(99)))")
        } catch {
            errors.append("\(server), \(scenario.name), round \(round): \(error)")
            progress("\(server) \(scenario.key): ERROR \(error.description.prefix { $0 != "\n" })")
        }
    }

    /// loopd's run of `scenario`, its CPU taken on until it is idle again:
    /// a submit is acknowledged once queued, and the job it queued still
    /// costs loopd its running, which the CPU per job must include.
    private func measureLoopd(_ scenario: Scenario) throws(BenchError) -> Measurement {
        guard let daemon = loopd else { throw BenchError("loopd is gone (an earlier error)") }
        let w = windows.window(daemon.pid)
        defer { windows.note(w) }
        do throws(BenchError) {
            var m = try runScenario(scenario, on: daemon, window: w, threadPerClient: options.threadPerClient)
            let cpu0 = daemon.cpuSeconds
            try daemon.checkAlive()
            try daemon.waitIdle(seconds: 30)
            let drained = daemon.cpuSeconds - cpu0
            m.serverCPU += drained
            drainCPU[scenario.key, default: 0] += drained
            return m
        } catch {
            if Processes.exitStatus(daemon.pid) != nil {
                loopd = nil  // gone: nothing more to measure on it
            }
            throw error
        }
    }

    /// beanstalkd's run of `scenario`, on a fresh beanstalkd.
    private func measureBeanstalkd(_ scenario: Scenario) throws(BenchError) -> Measurement {
        let beanstalk = try restartBeanstalkd()
        let w = windows.window(beanstalk.pid)
        defer { windows.note(w) }
        return try runBeanstalk(scenario, on: beanstalk, window: w)
    }

    /// Stops the beanstalkd of the last measurement, if any, and starts
    /// another: an empty queue for every measurement, since the submit
    /// scenarios leave every job they put in it (nothing reserves them).
    private func restartBeanstalkd() throws(BenchError) -> BeanstalkReference {
        _ = beanstalk?.stop()
        beanstalk = nil
        let b = try BeanstalkReference.start(directory: directory)
        beanstalk = b
        return b
    }

    /// Stops the children and removes the temp directory.
    private func cleanUp() {
        if let loopd {
            let how = loopd.stop()
            if how != "exited 0" { progress("loopd \(how)") }
        }
        loopd = nil
        _ = beanstalk?.stop()
        beanstalk = nil
        Children.killAll()
        Files.removeRunDirectory(directory, keep: options.keep)
    }

    // MARK: Report

    /// The server's CPU seconds per job, in µs; — without jobs.
    private static func cpuPerJob(_ m: Measurement) -> String {
        m.jobs > 0 ? Format.fixed(m.serverCPU / Double(m.jobs) * 1e6, 1) + " µs" : "—"
    }

    /// `figure` of each round, for `server`'s runs of `scenario`, and the
    /// median of those rounds where it could be taken.
    private func medianOf(_ scenario: Scenario, _ server: Server, _ figure: (Measurement) -> Double?) -> Double? {
        median((measured[server]?[scenario.key] ?? []).compactMap(figure))
    }

    /// loopd's `figure` ÷ beanstalkd's, for each round both measured, and the
    /// median of those ratios.
    private func pairedRatio(_ scenario: Scenario, _ figure: (Measurement) -> Double?) -> Double? {
        let beanstalkRuns = measured[.beanstalkd]?[scenario.key] ?? []
        return median((measured[.loopd]?[scenario.key] ?? []).compactMap { m in
            guard let b = beanstalkRuns.first(where: { $0.round == m.round }), let x = figure(m), let y = figure(b),
                  y > 0 else { return nil }
            return x / y
        })
    }

    /// A run's jobs/s; nil without jobs (a run that failed has no figures).
    private static func rate(_ m: Measurement) -> Double? { m.jobs > 0 ? m.rate : nil }
    /// A run's server CPU seconds per job.
    private static func cpu(_ m: Measurement) -> Double? { m.jobs > 0 ? m.serverCPU / Double(m.jobs) : nil }
    /// `count` (switches, wake-ups: nil when not counted) per job of the run.
    private static func perJob(_ count: Int?, _ m: Measurement) -> Double? {
        guard let count, m.jobs > 0 else { return nil }
        return Double(count) / Double(m.jobs)
    }

    /// The comparison table (medians and paired ratios), the per-round
    /// table, and the notes.
    private func report() {
        var table = MarkdownTable(columns: ["scenario", "server", "jobs/s", "CPU/job", "switches/job",
                                            "wake-ups of server/job", "loopd ÷ beanstalkd jobs/s",
                                            "loopd ÷ beanstalkd CPU/job"])
        var details = MarkdownTable(columns: ["scenario", "server", "jobs/s per round", "CPU/job per round",
                                              "voluntary + involuntary/job", "wake-ups by server/job",
                                              "p50 / p99", "bench CPU/job"])
        for scenario in scenarios {
            for server in Server.allCases {
                let ratios = server == .loopd
                    ? [pairedRatio(scenario, Self.rate), pairedRatio(scenario, Self.cpu)].map {
                        $0.map(Format.percent) ?? "—"
                    }
                    : ["", ""]
                table.add([scenario.key, server.rawValue,
                           medianOf(scenario, server, Self.rate).map(Format.count) ?? "—",
                           medianOf(scenario, server, Self.cpu).map { Format.fixed($0 * 1e6, 1) + " µs" } ?? "—",
                           medianOf(scenario, server) { Self.perJob($0.wakes.switches, $0) }
                               .map { Format.fixed($0, 2) } ?? "—",
                           medianOf(scenario, server) { Self.perJob($0.wakes.wakeupsOfServer, $0) }
                               .map { Format.fixed($0, 2) } ?? "—"] + ratios)
                details.add(detailRow(scenario, server))
            }
        }
        out(table.render())
        out(details.render())
        notes()
    }

    /// One server's runs of one scenario, round by round, to judge stability
    /// and see where the switches and the benchmark's own CPU went.
    private func detailRow(_ scenario: Scenario, _ server: Server) -> [String] {
        let runs = measured[server]?[scenario.key] ?? []
        let jobs = runs.reduce(0) { $0 + $1.jobs }
        let wakes = WakeCounts.total(runs.map(\.wakes))
        let split = wakes.switches != nil
            ? WakeColumns.perJob(wakes.voluntary, jobs) + " + " + WakeColumns.perJob(wakes.involuntary, jobs) : "—"
        let p = Percentiles(runs.flatMap(\.latencies))
        let bench = runs.reduce(0) { $0 + $1.benchCPU }
        return [scenario.key, server.rawValue, runs.map { Format.count($0.rate) }.joined(separator: " / "),
                runs.map(Self.cpuPerJob).joined(separator: " / "), split,
                WakeColumns.perJob(wakes.wakeupsByServer, jobs),
                "\(Format.latency(p.percentile(50))) / \(Format.latency(p.percentile(99)))",
                jobs > 0 ? Format.fixed(bench / Double(jobs) * 1e6, 1) + " µs" : "—"]
    }

    /// What each column means, as the main report's notes say it.
    private func notes() {
        let drained = scenarios.filter { !$0.waited }.compactMap { s in
            drainCPU[s.key].map { "\(s.key) \(Format.fixed($0 * 1e3, 0)) ms" }
        }
        out("- scenarios: submit1 / submit50: 1 / 50 clients, each sending its next request once the last was "
            + "answered; loopd: `submit` of `noop` with `wait: false`, answered once queued (a worker then runs "
            + "it); beanstalkd: `put 0 0 60 1` answered `INSERTED` (the job stays queued: nothing takes it). "
            + "cycle1 / cycle50: a job's whole life; loopd: the `noop` submit waited for, answered when the job "
            + "has ended; beanstalkd: `put`, `reserve-with-timeout 0`, `delete` (three round trips; with 50 "
            + "clients the job reserved may be another client's).")
        out("- jobs/s: jobs (loopd: replies; beanstalkd: puts or whole cycles) ÷ (first request → last reply), all "
            + "clients; median of the rounds. p50 / p99: a job's first request written → its last reply read, "
            + "every job of every round.")
        out("- CPU/job: the server's CPU seconds (user + system, all its threads, /proc/PID/stat, 10 ms ticks) over "
            + "the measured run ÷ its jobs; median of the rounds. loopd's runs until it is idle again (stats: "
            + "nothing queued or running), so it includes running every job it acknowledged"
            + (drained.isEmpty ? "" : " (CPU after the last reply, all rounds: \(drained.joined(separator: ", ")))")
            + "; beanstalkd's submit rows include no consumer. bench CPU/job: this benchmark's, all its threads.")
        out("- switches/job: the server's context switches (voluntary + involuntary, all its threads, "
            + "/proc/PID/task/*/status) over the measured run ÷ its jobs; wake-ups of server/job: "
            + "sched:sched_wakeup events whose woken task is one of its threads ÷ jobs (perf); by server: "
            + "raised while one of its threads ran. Medians of the rounds in the first table, sums ÷ jobs in the "
            + "second; counted from the first request to the last reply (loopd's idling after it is not).")
        out("- loopd ÷ beanstalkd: each round's loopd figure ÷ beanstalkd's of the same round (measured right "
            + "before or after it), median over the rounds: above 100% in jobs/s, loopd is faster; above 100% in "
            + "CPU/job, loopd spends more per job.")
        if skipped > 0 { out("- \(skipped) scenario pair(s) skipped: the time budget was used up") }
        for e in windows.errors { out("- perf: \(e)") }
    }
}
