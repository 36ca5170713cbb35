import LoopPlatform

/// Progress on stderr, so stdout holds just the report.
func progress(_ message: String) {
    writeStandard(2, "  \(message)\n")
}

/// One whole run: set up loopd and redis, measure in rounds, report, clean up.
final class Bench {
    let options: Options
    let quick: Bool
    let rounds: Int

    let sequential1: Scenario
    /// `sequential1` against the second loopd, the one with the opt-in spin.
    let sequential1Spin: Scenario
    let clients16: Scenario
    let pipelined64: Scenario
    let clients50: Scenario
    let durable: Scenario
    /// `sequential1` and `pipelined64` through the Swift client library.
    let sequential1Client: Scenario
    let pipelined64Client: Scenario
    /// Submits with random priorities, 64 pipelined, beside beanstalkd's `put`.
    let priorities64: Scenario
    /// The exec action `true` instead of `noop`: a child process per job.
    let exec1: Scenario
    let exec16: Scenario
    var scenarios: [Scenario] {
        [sequential1, sequential1Client, sequential1Spin, clients16, pipelined64, pipelined64Client, clients50, durable,
         priorities64, exec1, exec16]
    }

    /// How long each redis-benchmark run should last (sized from the previous one).
    let redisSeconds: Double

    private var directory = ""
    private var loopd: LoopdProcess?
    /// A second loopd with `server.spin_before_sleeping_us = options.spinUs`,
    /// only for the opt-in `seq1spin` row; idle (asleep) the rest of the run.
    private var loopdSpin: LoopdProcess?
    private var redis: RedisReference?
    private var beanstalk: BeanstalkReference?
    /// beanstalkd's `put` runs, one per round, for the priorities row.
    fileprivate var beanstalkRates: [BeanstalkRun] = []
    /// perf, probed at first use (once `directory` exists), and the windows
    /// that count each measurement's switches and wake-ups.
    private lazy var windows = WakeWindows(noPerf: options.noPerf, directory: directory)
    private var errors: [String] = []
    private var measured: [String: [Measurement]] = [:]
    private var failed: [String: String] = [:]
    private var redisResults: [Int: [RedisReference.Result]] = [:]
    private var redisRequests: [Int: Int]
    private var round = 0
    private var skipped: Set<String> = []
    /// Measurements start only while the run is within this many seconds
    /// (the watchdog kills the run at 58 s quick / 290 s full).
    private let budgetSeconds: Double
    private var runStart: UInt64 = 0

    private var remainingSeconds: Double { budgetSeconds - Double(monotonicNanoseconds() - runStart) / 1e9 }

    init(_ options: Options) {
        self.options = options
        quick = options.quick
        rounds = options.rounds ?? (quick ? 1 : 5)
        sequential1 = Scenario(key: "seq1", name: "1 client, sequential", clients: 1, depth: 1, durable: false,
                               seconds: quick ? 1 : 3, warmup: quick ? 200 : 1000)
        sequential1Spin = Scenario(key: "seq1spin",
                                   name: "1 client, sequential, opt-in spin_before_sleeping_us = \(options.spinUs)",
                                   clients: 1, depth: 1, durable: false, seconds: quick ? 1 : 3,
                                   warmup: quick ? 200 : 1000)
        clients16 = Scenario(key: "c16", name: "16 clients, sequential each", clients: 16, depth: 1, durable: false,
                             seconds: quick ? 1 : 3, warmup: quick ? 20 : 100)
        pipelined64 = Scenario(key: "pipe64", name: "1 client, 64 pipelined", clients: 1, depth: 64, durable: false,
                               seconds: quick ? 1 : 3, warmup: quick ? 2000 : 10000)
        clients50 = Scenario(key: "c50", name: "50 clients, sequential each", clients: 50, depth: 1, durable: false,
                             seconds: quick ? 1 : 3, warmup: quick ? 20 : 100)
        durable = Scenario(key: "durable", name: "durable async submits (1 client, 256 pipelined, fsync on)", clients: 1,
                           depth: 256, durable: true, seconds: quick ? 1 : 3, warmup: quick ? 1000 : 5000)
        sequential1Client = Scenario(key: "seq1client", name: "1 client, sequential, through LoopdClient",
                                     clients: 1, depth: 1, durable: false, seconds: quick ? 1 : 3,
                                     warmup: quick ? 200 : 1000, throughClient: true)
        pipelined64Client = Scenario(key: "pipe64client", name: "1 client, 64 pipelined, through LoopdClient",
                                     clients: 1, depth: 64, durable: false, seconds: quick ? 1 : 3,
                                     warmup: quick ? 2000 : 10000, throughClient: true)
        var p = Scenario(key: "prio64", name: "submit, random priorities, 1 client, 64 pipelined (not waited)", clients: 1,
                         depth: 64, durable: false, seconds: quick ? 1 : 3, warmup: quick ? 2000 : 10000)
        p.randomPriorities = true
        priorities64 = p
        var e = Scenario(key: "exec1", name: "exec /bin/true, 1 client, sequential", clients: 1, depth: 1,
                         durable: false, seconds: quick ? 1 : 2, warmup: quick ? 20 : 100)
        e.exec = true
        exec1 = e
        e = Scenario(key: "exec16", name: "exec /bin/true, 16 clients, sequential each", clients: 16, depth: 1,
                     durable: false, seconds: quick ? 1 : 2, warmup: quick ? 2 : 10)
        e.exec = true
        exec16 = e
        redisSeconds = quick ? 0.75 : 2.5
        budgetSeconds = quick ? 45 : 240
        redisRequests = [1: quick ? 5000 : 2000, 50: 20000]
    }

    /// The process exit status.
    func run() -> Int32 {
        runStart = monotonicNanoseconds()
        let loadBefore = Processes.loadAverage()
        let binary = options.loopdBinary
        guard Files.isExecutable(binary) else {
            writeStandard(2, """
                LoopdBench: no loopd at \(binary). Build it in the repository first:
                  swift build -c release --product loopd
                or name one with --loopd PATH.\n
                """)
            return 1
        }
        do throws(BenchError) {
            directory = try Files.makeTempDirectory(base: options.tmpBase, prefix: "loopd-bench-")
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
        defer { cleanUp() }

        out("## loopd end-to-end benchmark\(quick ? " (--quick)" : "")\n")
        let daemon: LoopdProcess
        do throws(BenchError) {
            daemon = try LoopdProcess(binary: binary, directory: directory, workers: 2, logLevel: options.logLevel)
            loopd = daemon
        } catch {
            writeStandard(2, "LoopdBench: \(error)\n")
            return 1
        }
        if selected(sequential1Spin.key) {
            do throws(BenchError) {
                let spinDirectory = try Files.makeTempDirectory(base: directory, prefix: "spin-")
                loopdSpin = try LoopdProcess(binary: binary, directory: spinDirectory, workers: 2,
                                             logLevel: options.logLevel, spinUs: options.spinUs)
            } catch {
                errors.append("\(sequential1Spin.name): \(error)")
                failed[sequential1Spin.name] = error.description
            }
        }
        var reference = "none"
        do throws(BenchError) {
            let r = try RedisReference.start(directory: directory)
            redis = r
            reference = "\(r.version), `redis-benchmark -s SOCK -t ping -c N -n N --csv`"
        } catch {
            reference = "none (\(error))"
            progress("no redis reference: \(error)")
        }
        var beanstalkNote = "not run"
        if selected(priorities64.key) {
            do throws(BenchError) {
                let b = try BeanstalkReference.start(directory: directory)
                beanstalk = b
                beanstalkNote = "\(b.version) on a Unix socket, no binlog, `put <pri> 0 60 1` 64 pipelined from this benchmark"
            } catch {
                beanstalkNote = "none (\(error))"
                progress("no beanstalkd reference: \(error)")
            }
        }
        let cpus = onlineCPUCount()
        out("- loopd: `\(binary)` (pid \(daemon.pid)), 2 workers, journal fsync on, log_level "
              + "\(options.logLevel ?? "default (info: a record per job, to a file)"), state dir on "
              + "\(Files.fileSystemName(directory)) (`\(directory)`)")
        let execUser = daemon.execUser.map { $0.isEmpty ? "loopd's own user (`[exec] user = \"\"`)" : "`\($0)`" }
        out("- exec1, exec16: the action `true` (`/bin/true`), children as "
              + (execUser.map { "\($0), contained" } ?? "loopd's own user, uncontained (this loopd has no `[exec]`)"))
        if let loopdSpin {
            out("- the opt-in spin row: a second loopd (pid \(loopdSpin.pid)), the same but for "
                  + "`spin_before_sleeping_us = \(options.spinUs)` (off by default), measured right after the first")
        }
        out("- reference: \(reference)")
        out("- queue reference (prio64): \(beanstalkNote)")
        out(windows.headerLine)
        out(Affinity.headerLine(pinned: options.pin, processes: [("benchmark", processID()), ("loopd", daemon.pid)]
                                + (redis.map { [("redis-server", $0.pid)] } ?? [])))
        out("- \(cpus) CPUs, load average before: \(loadBefore); \(rounds) round(s), medians reported\n")

        if redis != nil && !quick {
            // Calibration: size the measured redis runs to about `redisSeconds`.
            measureRedis(clients: 1)
            measureRedis(clients: 50)
            redisResults = [:]
        }
        for r in 1...rounds {
            round = r
            progress("round \(r) of \(rounds)")
            // Each loopd figure with a redis reference is taken right after it.
            measureRedis(clients: 1)
            measure(sequential1)
            measure(sequential1Client)
            if let loopdSpin { measure(sequential1Spin, on: loopdSpin) }
            measure(clients16)
            measure(pipelined64)
            measure(pipelined64Client)
            measureRedis(clients: 50)
            measure(clients50)
            measure(durable)
            measureBeanstalk()
            measure(priorities64)
            measure(exec1)
            measure(exec16)
        }

        let table = report(cpus: cpus)
        out("- load average after: \(Processes.loadAverage()); the run took "
              + "\(Format.fixed(Double(monotonicNanoseconds() - runStart) / 1e9, 1)) s.")
        if !errors.isEmpty {
            out("\nErrors:")
            for e in errors { out("- \(e)") }
        }
        let missed = table.rows.contains { ["MISS", "n/a", "ERROR", "not run", "skipped"].contains($0.last ?? "") }
        let loopdErrors = errors.contains { !$0.hasPrefix("redis") }
        return loopdErrors ? 1 : (options.strict && missed ? 1 : 0)
    }

    // MARK: Measurements

    fileprivate func measuredRuns(_ name: String) -> [Measurement] { measured[name] ?? [] }

    fileprivate func selected(_ key: String) -> Bool { options.only?.contains(key) ?? true }

    private func measureRedis(clients: Int) {
        guard let redis, selected("redis") else { return }
        guard remainingSeconds > 5 else {
            skipped.insert("redis\(clients)")
            progress("redis -c \(clients): skipped (time budget of \(Int(budgetSeconds)) s used up)")
            return
        }
        let n = redisRequests[clients] ?? 10000
        do throws(BenchError) {
            let w = windows.window(redis.pid)
            defer { windows.note(w) }
            var r = try redis.benchmark(clients: clients, requests: n,
                                        timeoutSeconds: min(quick ? 20 : 40, remainingSeconds - 2), window: w)
            r.round = round
            redisResults[clients, default: []].append(r)
            progress("redis PING -c \(clients) -n \(n): \(Format.count(r.rps)) req/s (\(r.test)), "
                     + "p50 \(Format.latency(ms: r.p50ms))")
            // -t ping runs two tests (PING_INLINE, PING_MBULK) of -n requests each.
            redisRequests[clients] = min(max(Int(r.rps * redisSeconds / 2), 2000), 5_000_000)
        } catch {
            errors.append("redis -c \(clients): \(error)")
            progress("redis -c \(clients): \(error)")
        }
    }

    private func measureBeanstalk() {
        guard beanstalk != nil, selected(priorities64.key), remainingSeconds > priorities64.seconds + 5 else { return }
        do throws(BenchError) {
            // A fresh beanstalkd each round: it keeps every job put (nothing
            // reserves them), and a tube of millions is slower to put into;
            // loopd's jobs run and leave.
            _ = beanstalk?.stop()
            beanstalk = nil
            let beanstalk = try BeanstalkReference.start(directory: directory)
            self.beanstalk = beanstalk
            let w = windows.window(beanstalk.pid)
            defer { windows.note(w) }
            let cpu0 = Processes.cpuSeconds(beanstalk.pid) ?? 0
            let r = try beanstalk.put(depth: 64, priorities: RandomPriorities.values, seconds: priorities64.seconds,
                                      window: w)
            let cpu = (Processes.cpuSeconds(beanstalk.pid) ?? 0) - cpu0
            let rate = Double(r.jobs) / r.seconds
            beanstalkRates.append(BeanstalkRun(round: round, rate: rate, jobs: r.jobs, cpuSeconds: cpu, wakes: r.wakes))
            progress("beanstalkd put, random priorities, 64 pipelined: \(Format.count(rate)) jobs/s")
        } catch {
            errors.append("beanstalkd: \(error)")
            progress("beanstalkd: \(error)")
        }
    }

    /// Measures `scenario` on `daemon` (default: the first loopd).
    private func measure(_ scenario: Scenario, on other: LoopdProcess? = nil) {
        guard selected(scenario.key), failed[scenario.name] == nil, let daemon = other ?? loopd else { return }
        guard remainingSeconds > scenario.seconds + 5 else {
            skipped.insert(scenario.name)
            progress("\(scenario.name): skipped (time budget of \(Int(budgetSeconds)) s used up)")
            return
        }
        do throws(BenchError) {
            let w = windows.window(daemon.pid)
            defer { windows.note(w) }
            var m = try runScenario(scenario, on: daemon, window: w, threadPerClient: options.threadPerClient)
            m.round = round
            measured[scenario.name, default: []].append(m)
            let p = Percentiles(m.latencies)
            let switches = WakeColumns.perJob(m.wakes.switches, m.jobs)
            progress("\(scenario.name): \(Format.count(m.rate)) jobs/s, p50 \(Format.latency(p.percentile(50))), "
                     + "p99 \(Format.latency(p.percentile(99))), loopd CPU "
                     + "\(Format.fixed(m.serverCPU / m.wallSeconds, 2)) cores, \(switches) switches/job")
        } catch {
            failed[scenario.name] = error.description
            errors.append("\(scenario.name): \(error)")
            progress("\(scenario.name): ERROR \(error.description.prefix { $0 != "\n" })")
        }
        do throws(BenchError) {
            try daemon.checkAlive()
            try daemon.waitIdle(seconds: 30)
        } catch {
            errors.append("after \(scenario.name): \(error)")
            progress("after \(scenario.name): \(error.description.prefix { $0 != "\n" })")
            _ = daemon.stop()
            // Gone or wedged: nothing more to measure on it.
            if daemon === loopdSpin { loopdSpin = nil } else { loopd = nil }
        }
    }

    /// Stops the children and removes the temp directory.
    private func cleanUp() {
        if let loopd {
            let how = loopd.stop()
            if how != "exited 0" { progress("loopd \(how)") }
        }
        loopd = nil
        if let loopdSpin {
            let how = loopdSpin.stop()
            if how != "exited 0" { progress("loopd (spin) \(how)") }
        }
        loopdSpin = nil
        if let redis { _ = redis.stop() }
        redis = nil
        if let beanstalk { _ = beanstalk.stop() }
        beanstalk = nil
        Children.killAll()
        Files.removeRunDirectory(directory, keep: options.keep)
    }

    // MARK: Report

    private struct Target {
        let text: String
        /// (loopd jobs/s, loopd ÷ redis) → pass; nil when it cannot be judged.
        let check: (Double, Double?) -> Bool?
    }

    private func row(_ scenario: Scenario, redisClients: Int?, target: Target?) -> [String] {
        let runs = measured[scenario.name] ?? []
        let rate = median(runs.map(\.rate))
        let p = Percentiles(runs.flatMap(\.latencies))
        let redisRate = redisClients.flatMap { c in median((redisResults[c] ?? []).map(\.rps)) }
        // The ratio pairs each round's loopd figure with the redis run just
        // before it (same machine load), and takes the median of those.
        var pairedRatios: [Double] = []
        if let redisClients {
            for m in runs {
                if let r = redisResults[redisClients]?.first(where: { $0.round == m.round }), r.rps > 0 {
                    pairedRatios.append(m.rate / r.rps)
                }
            }
        }
        let medianRatio = median(pairedRatios)
        let ratio = medianRatio.map(Format.percent) ?? "—"
        var verdict = "—"
        if failed[scenario.name] != nil {
            verdict = "ERROR"
        } else if runs.isEmpty {
            verdict = skipped.contains(scenario.name) ? "skipped" : "not run"
        } else if let target {
            if let rate, let pass = target.check(rate, medianRatio) {
                verdict = pass ? "PASS" : "MISS"
            } else {
                verdict = "n/a"
            }
        }
        return [scenario.name, rate.map(Format.count) ?? "—",
                Format.latency(p.percentile(50)), Format.latency(p.percentile(99)),
                redisRate.map(Format.count) ?? "—", ratio, target?.text ?? "—", verdict]
    }

    /// A row measured through LoopdClient: its ratio is to the raw-socket
    /// driver's figure of the same round (taken just before it), in the
    /// ratio column; the redis column is empty.
    private func clientRow(_ scenario: Scenario, raw: Scenario, fraction: Double) -> [String] {
        let runs = measured[scenario.name] ?? []
        let rawRuns = measured[raw.name] ?? []
        let rate = median(runs.map(\.rate))
        let p = Percentiles(runs.flatMap(\.latencies))
        var ratios: [Double] = []
        for m in runs {
            if let r = rawRuns.first(where: { $0.round == m.round }), r.rate > 0 { ratios.append(m.rate / r.rate) }
        }
        let ratio = median(ratios)
        var verdict: String
        if failed[scenario.name] != nil {
            verdict = "ERROR"
        } else if runs.isEmpty {
            verdict = skipped.contains(scenario.name) ? "skipped" : "not run"
        } else if let ratio {
            verdict = ratio >= fraction ? "PASS" : "MISS"
        } else {
            verdict = "n/a"
        }
        return [scenario.name, rate.map(Format.count) ?? "—", Format.latency(p.percentile(50)),
                Format.latency(p.percentile(99)), "—", ratio.map { Format.percent($0) + " of raw" } ?? "—",
                "≥ \(Format.percent(fraction)) of the raw-socket row", verdict]
    }

    private func report(cpus: Int) -> MarkdownTable {
        var table = MarkdownTable(columns: ["scenario", "loopd jobs/s", "p50", "p99", "redis req/s", "ratio",
                                            "target", "PASS/MISS"])
        table.add(row(sequential1, redisClients: 1,
                      target: Target(text: "≥ 60% of redis PING, 1 client") { _, ratio in ratio.map { $0 >= 0.6 } }))
        if selected(sequential1Spin.key) {
            table.add(row(sequential1Spin, redisClients: 1, target: nil))  // opt-in: no target
        }
        table.add(clientRow(sequential1Client, raw: sequential1, fraction: 0.9))
        table.add(row(clients16, redisClients: nil, target: nil))
        table.add(row(pipelined64, redisClients: nil,
                      target: Target(text: "≥ 100,000 jobs/s") { r, _ in r >= 100_000 }))
        table.add(clientRow(pipelined64Client, raw: pipelined64, fraction: 0.8))
        table.add(row(clients50, redisClients: 50,
                      target: Target(text: "≥ 50% of redis PING, 50 clients") { _, ratio in ratio.map { $0 >= 0.5 } }))
        table.add(row(durable, redisClients: nil,
                      target: Target(text: "≥ 20,000 acks/s, fsync on") { r, _ in r >= 20_000 }))
        table.add(row(exec1, redisClients: nil, target: nil))
        table.add(row(exec16, redisClients: nil, target: nil))
        out(table.render())
        if selected(priorities64.key) { out("\n" + prioritiesTable().render()) }

        // Per-round figures and where the CPU went, to judge stability.
        var details = MarkdownTable(columns: ["measurement", "per round (jobs/s or req/s)", "jobs measured",
                                              "server CPU", "server CPU per job", "bench CPU", "p50 / p99 per round"])
        for scenario in scenarios {
            let runs = measured[scenario.name] ?? []
            let wall = runs.reduce(0) { $0 + $1.wallSeconds }
            let jobs = runs.reduce(0) { $0 + $1.jobs }
            let loopdCPU = runs.reduce(0) { $0 + $1.serverCPU }
            func cores(_ seconds: Double) -> String { wall > 0 ? Format.fixed(seconds / wall, 2) + " cores" : "—" }
            details.add([scenario.name, runs.map { Format.count($0.rate) }.joined(separator: " / "),
                         Format.count(Double(jobs)), cores(loopdCPU),
                         jobs > 0 ? Format.fixed(loopdCPU / Double(jobs) * 1e6, 1) + " µs" : "—",
                         cores(runs.reduce(0) { $0 + $1.benchCPU }),
                         runs.map {
                             let p = Percentiles($0.latencies)
                             return "\(Format.latency(p.percentile(50))) / \(Format.latency(p.percentile(99)))"
                         }.joined(separator: ", ")])
        }
        for clients in [1, 50] {
            let runs = redisResults[clients] ?? []
            let requests = runs.reduce(0) { $0 + $1.requests }
            let cpu = runs.reduce(0) { $0 + $1.serverCPU }
            details.add(["redis PING, \(clients) client\(clients == 1 ? "" : "s")",
                         runs.map { "\(Format.count($0.rps)) (\($0.test))" }.joined(separator: " / "),
                         Format.count(Double(requests)), "—",
                         requests > 0 ? Format.fixed(cpu / Double(requests) * 1e6, 1) + " µs" : "—", "—",
                         runs.map { "\(Format.latency(ms: $0.p50ms)) / \(Format.latency(ms: $0.p99ms))" }
                             .joined(separator: ", ")])
        }
        out(details.render())
        out("\n" + wakeTable().render())
        out("- loopd jobs/s: verified replies ÷ (first request → last reply), all clients; median of the rounds. "
              + "p50/p99: request written → reply read, every job of every round. Every reply's id was checked "
              + "against the requests in flight on its connection.")
        out("- through LoopdClient: the same noop submits made with the Swift client library, 1 task or 64 tasks "
            + "sharing one connection on the client's event loop (`client.taskExecutor`), each awaiting its typed "
            + "reply; ratio: each round's figure ÷ the raw-socket row's of the same round (measured just before), "
            + "median over the rounds.")
        out("- exec rows: the exec action `true` (`/bin/true`) instead of `noop`, each job a child process loopd "
            + "starts and waits for; loopd's CPU counts its own threads, not the children's.")
        out("- redis: the faster of PING_INLINE and PING_MBULK per run. ratio: each round's loopd figure ÷ the "
            + "redis run taken just before it (same load), median over the rounds; redis req/s: median of its runs.")
        out("- server CPU = loopd's (all its threads) CPU seconds ÷ wall seconds of the measured run, "
            + "and ÷ its jobs; redis: redis-server's CPU ÷ requests (both PING tests). "
            + "CPU per job depends far less on what else runs on the machine than jobs/s does. \(cpus) CPUs.")
        out("- switches/job: the server's context switches (voluntary + involuntary, all its threads, "
            + "/proc/PID/task/*/status) over the measured run ÷ its jobs (redis: requests); voluntary ones are "
            + "sleeps, each later ended by a wake-up; involuntary ones are preemptions, which other load adds. "
            + "wake-ups of / by the server: sched:sched_wakeup events whose woken task is one of its threads / "
            + "raised while one of its threads ran, ÷ jobs (perf). Benchmarks/README.md says what they cannot show.")
        for e in windows.errors { out("- perf: \(e)") }
        return table
    }
}

extension Bench {
    /// The priorities row: loopd's submits with random priorities beside
    /// beanstalkd's `put` with the same priorities, each round's pair
    /// measured one after the other; the ratio is the median of the pairs.
    fileprivate func prioritiesTable() -> MarkdownTable {
        var table = MarkdownTable(columns: ["scenario", "loopd jobs/s", "beanstalkd jobs/s", "ratio", "per round (loopd / beanstalkd)"])
        let runs = measuredRuns(priorities64.name)
        let pairs = runs.compactMap { m in
            beanstalkRates.first { $0.round == m.round }.map { (m.rate, $0.rate) }
        }
        table.add([priorities64.name, median(runs.map(\.rate)).map(Format.count) ?? "—",
                   median(beanstalkRates.map(\.rate)).map(Format.count) ?? "—",
                   median(pairs.map { $0.0 / $0.1 }).map(Format.percent) ?? "—",
                   pairs.map { "\(Format.count($0.0)) / \(Format.count($0.1))" }.joined(separator: ", ")])
        return table
    }
}

/// One beanstalkd `put` run of the priorities row.
struct BeanstalkRun {
    var round: Int
    var rate: Double
    var jobs: Int
    /// beanstalkd's CPU seconds over the run (its connecting included).
    var cpuSeconds: Double
    var wakes: WakeCounts
}

extension Bench {
    /// Per job, every server measured: how often its threads switched out,
    /// were woken and woke others, and its CPU; sums over the rounds ÷ jobs.
    fileprivate func wakeTable() -> MarkdownTable {
        var table = MarkdownTable(columns: WakeColumns.names)
        for scenario in scenarios where selected(scenario.key) {
            let runs = measuredRuns(scenario.name)
            let jobs = runs.reduce(0) { $0 + $1.jobs }
            table.add(WakeColumns.row(scenario.name, server: "loopd", jobs: jobs,
                                      wakes: WakeCounts.total(runs.map(\.wakes)),
                                      cpuSeconds: runs.reduce(0) { $0 + $1.serverCPU }))
        }
        for clients in [1, 50] where selected("redis") {
            let runs = redisResults[clients] ?? []
            table.add(WakeColumns.row("PING, \(clients) client\(clients == 1 ? "" : "s") (redis-benchmark)",
                                      server: "redis-server", jobs: runs.reduce(0) { $0 + $1.requests },
                                      wakes: WakeCounts.total(runs.map(\.wakes)),
                                      cpuSeconds: runs.reduce(0) { $0 + $1.serverCPU }))
        }
        if selected(priorities64.key) {
            table.add(WakeColumns.row("put, random priorities, 1 client, 64 pipelined", server: "beanstalkd",
                                      jobs: beanstalkRates.reduce(0) { $0 + $1.jobs },
                                      wakes: WakeCounts.total(beanstalkRates.map(\.wakes)),
                                      cpuSeconds: beanstalkRates.reduce(0) { $0 + $1.cpuSeconds }))
        }
        return table
    }
}
