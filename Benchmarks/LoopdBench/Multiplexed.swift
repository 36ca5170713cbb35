import LoopPlatform

/// The many-client scenarios driven the way `redis-benchmark -c N` drives
/// redis: one thread multiplexing every connection with `poll`, not a thread
/// per client. Both subjects of the comparison then face the same kind of
/// load generator, and the client side costs the shared 2 CPUs the same:
/// a thread per client blocked in `read` makes every reply a scheduler
/// wake-up of its own, which loopd's replies would pay for and redis's not.
func runMultiplexed(_ scenario: Scenario, socketPath: String, loopd: LoopdProcess,
                    window: WakeWindow) throws(BenchError) -> Measurement {
    var connections: [Connection] = []
    for _ in 0..<scenario.clients { connections.append(try Connection(path: socketPath)) }
    if scenario.warmup > 0 {
        _ = try driveAll(connections, depth: scenario.depth, request: scenario.request, seconds: 30,
                         limitPerConnection: scenario.warmup)
    }
    return try measureRun(window: window, serverCPU: { loopd.cpuSeconds }) { () throws(BenchError) in
        try driveAll(connections, depth: scenario.depth, request: scenario.request, seconds: scenario.seconds,
                     limitPerConnection: Int.max)
    }
}

/// Keeps `depth` requests in flight on every connection for `seconds` (or
/// until `limitPerConnection` were sent on each), then waits for the rest.
/// Every reply must carry the id of a request in flight on its connection, once.
private func driveAll(_ connections: [Connection], depth: Int, request: [UInt8], seconds: Double,
                      limitPerConnection: Int) throws(BenchError) -> DriverRun {
    let expected = min(limitPerConnection, Int(seconds * 200_000 / Double(connections.count * max(depth, 1))) + 1024)
    var flights = connections.map { _ in InFlight(expected: expected) }
    var latencies: [UInt64] = []
    latencies.reserveCapacity(expected * connections.count)
    var replies = PollSet(connections.map(\.fd), interest: .readable)
    let limit = Int64(limitPerConnection)
    let start = monotonicNanoseconds()
    let stopAt = start + UInt64(seconds * 1e9)
    var now = start

    func topUp(_ k: Int) throws(BenchError) {
        while flights[k].count < depth && flights[k].sent < limit {
            connections[k].enqueue(id: flights[k].next(at: now), suffix: request)
        }
        try connections[k].flush()
    }

    for k in connections.indices { try topUp(k) }
    var outstanding = flights.reduce(Int64(0)) { $0 + $1.count }
    while outstanding > 0 {
        try replies.waitForReplies()
        for k in connections.indices where replies.isReady(k) {
            let before = flights[k].count
            try connections[k].receiveAvailable { (id) throws(BenchError) in
                latencies.append(try flights[k].answer(id, at: monotonicNanoseconds()))
            }
            now = monotonicNanoseconds()
            if now < stopAt { try topUp(k) }
            outstanding += flights[k].count - before
        }
    }
    return (Int(flights.reduce(Int64(0)) { $0 + $1.answered }), start, now, latencies)
}

extension PollSet {
    /// Waits until a reply is readable on one of the connections polled; a
    /// poll failure, or 10 s without any reply, ends the run.
    mutating func waitForReplies() throws(BenchError) {
        let ready: Int
        do {
            ready = try wait(timeoutMilliseconds: 10_000)
        } catch {
            throw BenchError("poll: \(errnoText(error.errno))")
        }
        guard ready > 0 else { throw BenchError("no reply within 10 s on any of \(count) connections") }
    }
}
