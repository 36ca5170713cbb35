import LoopPlatform
import LoopRuntime

// PGClientBench: the fleet's PostgreSQL client (LoopdCore's PostgresConnection,
// libpq on the main loop) beside postgres-nio hopping each result to the main
// loop, alternated run by run in one process. See `Options.usage`.

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    emit(error.message)
    exitProcess(2)
}

do {
    try Bench(options).run()
} catch {
    emit("PGClientBench: \(error)")
    exitProcess(1)
}

/// The whole run, on the main thread and its loop (as loopd's main loop).
struct Bench {
    let options: Options

    init(_ options: Options) { self.options = options }

    func run() throws(BenchFailure) {
        let target: NIOTarget
        do { target = try NIOTarget(options) } catch { throw BenchFailure(error.message) }
        let loop = Loop.current
        var clients: [any Client] = []
        if options.clients.contains("libpq") {
            clients.append(try LibpqClient(loop: loop, conninfo: options.conninfo, timeoutSeconds: options.timeoutSeconds))
        }
        if options.clients.contains("postgres-nio") {
            clients.append(try NIOClient(loop: loop, target: target, timeoutSeconds: options.timeoutSeconds))
        }

        var cases = [
            Case(label: "(a) SELECT 1", statement: .select, depth: 1),
            Case(label: "(b) UPDATE 1 row", statement: .update, depth: 1),
        ]
        if options.depth > 1 {
            cases.append(Case(label: "(c) SELECT 1, \(options.depth) queued", statement: .select, depth: options.depth))
        }

        emit("PGClientBench: \(options.transport) (postgres-nio: \(target.description)); "
            + "\(options.count) round trips per run after \(options.warmup) unmeasured, \(options.rounds) rounds; "
            + "load average \(loadAverage()); \(onlineCPUCount()) CPUs")
        // results[case][client]: one RunResult per round.
        var results = Array(repeating: Array(repeating: [RunResult](), count: clients.count), count: cases.count)
        for round in 1...options.rounds {
            for (ci, c) in cases.enumerated() {
                for (k, client) in clients.enumerated() {
                    let r = try Runner(client: client, case: c, warmup: options.warmup, count: options.count, loop: loop)
                        .run(timeoutSeconds: options.timeoutSeconds)
                    results[ci][k].append(r)
                    emit("round \(round) \(c.label) \(client.name): \(figure(r.perSecond)) rt/s, "
                        + "p50 \(figure(r.p50Microseconds)) µs, p99 \(figure(r.p99Microseconds)) µs, "
                        + "CPU \(figure(r.cpuMicrosecondsPerTrip)) µs/rt, \(figure(r.switchesPerTrip)) cs/rt")
                }
            }
        }
        for client in clients { client.close() }

        var rows: [[String]] = []
        for (ci, c) in cases.enumerated() {
            func medians(_ k: Int) -> [Double] {
                let runs = results[ci][k]
                return [median(runs.map(\.perSecond)), median(runs.map(\.p50Microseconds)),
                        median(runs.map(\.p99Microseconds)), median(runs.map(\.cpuMicrosecondsPerTrip)),
                        median(runs.map(\.switchesPerTrip))]
            }
            for k in clients.indices { rows.append([k == 0 ? c.label : "", clients[k].name] + medians(k).map(figure)) }
            if clients.count == 2 {
                rows.append(["", "nio ÷ libpq"] + zip(medians(1), medians(0)).map { fixed($0 / $1, 2) + "×" })
            }
        }
        emit()
        emit("\(options.transport): medians of \(options.rounds) rounds, \(options.count) round trips each; "
            + "load average now \(loadAverage())")
        emit()
        emit(markdownTable(["statement", "client", "round trips/s", "p50 µs", "p99 µs", "CPU µs/rt", "ctx sw/rt"], rows))
        emit()
    }
}
