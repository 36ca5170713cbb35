import LoopPlatform
import LoopdClient
import NIOCore
import NIOPosix

/// The rows measured through the Swift client library, `LoopdClient`,
/// beside the raw-socket driver's: the same `noop` submits the client waits
/// for, `depth` tasks sharing one connection (1: sequential), each task
/// sending its next request as soon as its reply came. The tasks prefer the
/// client's event loop as their executor (`client.taskExecutor`), the way
/// the client's documentation recommends for tight request loops.
func runThroughClient(_ scenario: Scenario, socketPath: String, loopd: LoopdProcess,
                      window: WakeWindow) throws(BenchError) -> Measurement {
    let client: LoopdClient
    do {
        client = try blocking(MultiThreadedEventLoopGroup.singleton.any()) {
            let client = try await LoopdClient.connect(socketPath: socketPath)
            if scenario.warmup > 0 {
                _ = try await drive(client, depth: scenario.depth, seconds: 30, limit: scenario.warmup)
            }
            return client
        }
    } catch {
        throw BenchError("LoopdClient: \(error)")
    }
    defer { try? blocking(client.eventLoop) { await client.close() } }
    window.open()
    let cpu0 = loopd.cpuSeconds, own0 = Processes.ownCPUSeconds(), wall0 = monotonicNanoseconds()
    let run: ClientLibraryRun
    do {
        run = try blocking(client.eventLoop) {
            try await drive(client, depth: scenario.depth, seconds: scenario.seconds, limit: Int.max)
        }
    } catch {
        _ = window.close()
        throw BenchError("LoopdClient: \(error)")
    }
    let wall = Double(monotonicNanoseconds() - wall0) / 1e9
    let cpu = loopd.cpuSeconds - cpu0, own = Processes.ownCPUSeconds() - own0
    return Measurement(jobs: run.latencies.count, seconds: Double(run.end - run.start) / 1e9,
                       latencies: run.latencies, serverCPU: cpu, benchCPU: own, wallSeconds: wall,
                       wakes: window.close())
}

private struct ClientLibraryRun: Sendable {
    var start: UInt64
    var end: UInt64
    var latencies: [UInt64]
}

/// Runs `body` as a task and blocks this (non-event-loop) thread until it ends.
private func blocking<T: Sendable>(_ loop: any EventLoop,
                                   _ body: @escaping @Sendable () async throws -> T) throws -> T {
    let promise = loop.makePromise(of: T.self)
    promise.completeWithTask { try await body() }
    return try promise.futureResult.wait()
}

/// `depth` tasks on the client's event loop, each submitting and awaiting
/// one job after another for `seconds` (or until `limit` jobs in all).
private func drive(_ client: LoopdClient, depth: Int, seconds: Double, limit: Int) async throws -> ClientLibraryRun {
    let start = monotonicNanoseconds()
    let stopAt = start + UInt64(seconds * 1e9)
    let perTask = limit == Int.max ? Int.max : (limit + depth - 1) / depth
    return try await withTaskExecutorPreference(client.taskExecutor) {
        try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<depth {
                group.addTask {
                    var latencies: [UInt64] = []
                    latencies.reserveCapacity(perTask == Int.max ? Int(seconds * 200_000) / depth + 1024 : perTask)
                    var now = monotonicNanoseconds()
                    while now < stopAt && latencies.count < perTask {
                        let job = try await client.submit("noop")
                        guard job.state == .completed else { throw BenchError("a noop ended \(job.state)") }
                        let end = monotonicNanoseconds()
                        latencies.append(end &- now)
                        now = end
                    }
                    return latencies
                }
            }
            var all: [UInt64] = []
            for try await latencies in group { all += latencies }
            return ClientLibraryRun(start: start, end: monotonicNanoseconds(), latencies: all)
        }
    }
}
