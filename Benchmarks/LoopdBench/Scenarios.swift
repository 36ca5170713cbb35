import LoopPlatform

/// One loopd workload: `clients` connections, each its own thread keeping
/// `depth` requests in flight (1: sequential), for `seconds`.
struct Scenario: Sendable {
    /// The short name `--only` uses.
    let key: String
    let name: String
    let clients: Int
    let depth: Int
    let durable: Bool
    let seconds: Double
    /// Requests per client before the clock starts (connection and daemon warm-up).
    let warmup: Int
    /// Driven through the Swift client library (`LoopdClient`) instead of
    /// the raw-socket driver.
    var throughClient = false

    /// Submits with random priorities, not waited for (the `prio64` row).
    var randomPriorities = false

    /// Submits the exec action `true` instead of the built-in `noop` (the
    /// `exec1` and `exec16` rows): a child process per job.
    var exec = false

    /// The client waits for each job to end (the default); false: only for
    /// its acknowledgement, once queued (`wait: false`, the `submit1` and
    /// `submit50` rows of `--versus-beanstalkd`).
    var waited = true

    var request: [UInt8] {
        exec ? Request.execWait : durable ? Request.durableAsync : waited ? Request.noopWait : Request.noopAsync
    }

    /// The requests a client sends, cycled: one, or one per priority.
    var requests: [[UInt8]] { randomPriorities ? Request.randomPriorities : [request] }
}

/// What one run of a scenario measured.
struct Measurement: Sendable {
    /// Replies received (all verified).
    var jobs: Int
    /// From the first client's start to the last client's last reply.
    var seconds: Double
    /// Request-to-reply latency of every job, ns.
    var latencies: [UInt64]
    /// CPU seconds the server (loopd; beanstalkd in `--versus-beanstalkd`),
    /// all its threads, and the benchmark used over the measured run.
    var serverCPU: Double
    var benchCPU: Double
    var wallSeconds: Double
    /// The server's context switches and wake-ups over the measured run.
    var wakes = WakeCounts.none
    /// Which round of the run it belongs to (set by the caller).
    var round = 0

    var rate: Double { seconds > 0 ? Double(jobs) / seconds : 0 }
}

/// What a driver's measured run gives: replies (all verified), from its
/// first request to its last reply (ns), and each job's latency (ns).
typealias DriverRun = (jobs: Int, start: UInt64, end: UInt64, latencies: [UInt64])

/// The measured part of a driver's run, for drivers that run on the calling
/// thread: opens `window`, runs `body`, closes the window, and takes the
/// server's CPU (`serverCPU`, all its threads, read before and after) and
/// the benchmark's over it.
func measureRun(window: WakeWindow, serverCPU: () -> Double,
                _ body: () throws(BenchError) -> DriverRun) throws(BenchError) -> Measurement {
    window.open()
    let cpu0 = serverCPU(), own0 = Processes.ownCPUSeconds(), wall0 = monotonicNanoseconds()
    let run: DriverRun
    do {
        run = try body()
    } catch {
        _ = window.close()
        throw error
    }
    let wall = Double(monotonicNanoseconds() - wall0) / 1e9
    let cpu = serverCPU() - cpu0, own = Processes.ownCPUSeconds() - own0
    return Measurement(jobs: run.jobs, seconds: Double(run.end - run.start) / 1e9, latencies: run.latencies,
                       serverCPU: cpu, benchCPU: own, wallSeconds: wall, wakes: window.close())
}

/// One client thread's outcome.
private struct ClientRun: Sendable {
    var jobs: Int
    var start: UInt64
    var end: UInt64
    var latencies: [UInt64]
}

/// Where a client thread leaves its outcome; read after `join()`.
private final class Slot: @unchecked Sendable {
    var result: Result<ClientRun, BenchError> = .failure(BenchError("client thread did not run"))
}

/// Runs `scenario` on `daemon` with the driver it calls for: the Swift
/// client library, one thread polling every connection when there are many
/// (as redis-benchmark does; see Multiplexed.swift), else a blocking thread
/// per client (also for many with `threadPerClient`).
func runScenario(_ scenario: Scenario, on daemon: LoopdProcess, window: WakeWindow,
                 threadPerClient: Bool) throws(BenchError) -> Measurement {
    if scenario.throughClient {
        return try runThroughClient(scenario, socketPath: daemon.socketPath, loopd: daemon, window: window)
    }
    if scenario.clients > 1 && !threadPerClient {
        return try runMultiplexed(scenario, socketPath: daemon.socketPath, loopd: daemon, window: window)
    }
    return try run(scenario, socketPath: daemon.socketPath, loopd: daemon, window: window)
}

/// Runs `scenario` against loopd's socket and returns its measurement;
/// `window` counts loopd's switches and wake-ups over the measured run.
func run(_ scenario: Scenario, socketPath: String, loopd: LoopdProcess, window: WakeWindow) throws(BenchError) -> Measurement {
    // The barrier opens twice: once every client has warmed up, and again
    // when the window is open, so the warm-up's wake-ups are not counted.
    let barrier = ThreadBarrier(count: scenario.clients + 1)
    let slots = (0..<scenario.clients).map { _ in Slot() }
    let threads = slots.enumerated().map { k, slot in
        NativeThread(name: "client-\(k)") {
            slot.result = clientThread(scenario, socketPath: socketPath, barrier: barrier)
        }
    }
    barrier.wait()  // the clients have connected and warmed up
    window.open()
    let cpu0 = loopd.cpuSeconds, own0 = Processes.ownCPUSeconds(), wall0 = monotonicNanoseconds()
    barrier.wait()  // the measured run starts now
    for t in threads { t.join() }
    let wall = Double(monotonicNanoseconds() - wall0) / 1e9
    let cpu = loopd.cpuSeconds - cpu0, own = Processes.ownCPUSeconds() - own0
    let wakes = window.close()

    var runs: [ClientRun] = []
    for slot in slots {
        switch slot.result {
        case .success(let r): runs.append(r)
        case .failure(let e): throw e
        }
    }
    let start = runs.map(\.start).min() ?? 0
    let end = runs.map(\.end).max() ?? 0
    var latencies: [UInt64] = []
    latencies.reserveCapacity(runs.reduce(0) { $0 + $1.latencies.count })
    for r in runs { latencies += r.latencies }
    return Measurement(jobs: runs.reduce(0) { $0 + $1.jobs }, seconds: Double(end - start) / 1e9,
                       latencies: latencies, serverCPU: cpu, benchCPU: own, wallSeconds: wall, wakes: wakes)
}

/// A client: connect, warm up, meet the others at the barrier (twice: see
/// `run`), then keep `depth` requests in flight until the time is up, and drain.
private func clientThread(_ scenario: Scenario, socketPath: String, barrier: ThreadBarrier) -> Result<ClientRun, BenchError> {
    var connection: Connection?
    var setupError: BenchError?
    do {
        let c = try Connection(path: socketPath)
        connection = c
        if scenario.warmup > 0 {
            _ = try drive(c, depth: scenario.depth, requests: scenario.requests, seconds: 30, limit: scenario.warmup)
        }
    } catch {
        setupError = error
    }
    barrier.wait()  // every thread arrives, failed or not, so none waits for ever
    barrier.wait()
    if let setupError { return .failure(setupError) }
    do {
        return .success(try drive(connection!, depth: scenario.depth, requests: scenario.requests,
                                  seconds: scenario.seconds, limit: Int.max))
    } catch {
        return .failure(error)
    }
}

/// Keeps `depth` requests in flight on `connection` for `seconds` (or until
/// `limit` were sent), then waits for the rest of the replies. Every reply
/// must carry the id of a request in flight, once.
private func drive(_ connection: Connection, depth: Int, requests: [[UInt8]], seconds: Double,
                   limit: Int) throws(BenchError) -> ClientRun {
    let request = requests[0], varies = requests.count > 1
    let expected = min(limit, Int(seconds * 200_000 / Double(max(depth, 1))) + 1024)
    var flight = InFlight(expected: expected)
    var latencies: [UInt64] = []
    latencies.reserveCapacity(expected)
    let start = monotonicNanoseconds()
    let stopAt = start + UInt64(seconds * 1e9)
    var now = start
    let limit = Int64(limit)
    while flight.count < depth && flight.sent < limit {
        let id = flight.next(at: now)
        connection.enqueue(id: id, suffix: varies ? requests[Int(id) % requests.count] : request)
    }
    try connection.flush()
    while flight.count > 0 {
        try connection.receive { (id) throws(BenchError) in
            latencies.append(try flight.answer(id, at: monotonicNanoseconds()))
        }
        now = monotonicNanoseconds()
        if now < stopAt {
            while flight.count < depth && flight.sent < limit {
                let id = flight.next(at: now)
                connection.enqueue(id: id, suffix: varies ? requests[Int(id) % requests.count] : request)
            }
            try connection.flush()
        }
    }
    return ClientRun(jobs: Int(flight.answered), start: start, end: now, latencies: latencies)
}
