import Foundation
import LoopdClient
import Testing

@Suite("LoopdClient: one connection, many requests")
struct ConcurrencyTests {
    @Test func tenThousandPipelinedSubmitsAllMatched() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let n = 10_000
        let outputs = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for i in 0..<n {
                group.addTask { (i, try await client.submit("echo", ["job-\(i)"]).output) }
            }
            var outputs = [String?](repeating: nil, count: n)
            for try await (i, output) in group { outputs[i] = output }
            return outputs
        }
        #expect(outputs.enumerated().allSatisfy { $0.element == "job-\($0.offset)" })
        #expect(try await client.stats().completed == Int64(n))
        await client.close()
    }

    @Test func tasksShareOneConnection() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<16 {
                group.addTask {
                    for k in 0..<100 {
                        switch k % 4 {
                        case 0: #expect(try await client.ping().version == LoopdVersion.current)
                        case 1:
                            let job = try await client.submit("echo", ["\(t)-\(k)"], options: .init(placement: .key("t\(t)")))
                            #expect(job.output == "\(t)-\(k)")
                        case 2:
                            let job = try await client.submit("noop", options: .noWait)
                            #expect(try await client.wait(job: job.job).state == .completed)
                        default: #expect(try await client.workers().count == 2)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await client.stats().connections == 1)
        await client.close()
    }

    /// With at most 2 requests in flight, a third caller suspends: the
    /// daemon sees 2 jobs until one of them ends.
    @Test func boundedInFlightRequestsMakeCallersWait() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath,
                                                   configuration: .init(maxInFlight: 2))
        let observer = try await LoopdClient.connect(socketPath: d.socketPath)
        let a = Task { try await client.submit("sleep", ["600000"], options: .init(placement: .worker("w1"))) }
        let b = Task { try await client.submit("sleep", ["600000"], options: .init(placement: .worker("w2"))) }
        #expect(await eventually { try await observer.stats().running == 2 })
        let c = Task { try await client.submit("noop") }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await observer.stats().accepted == 2, "the third request went out beyond the bound")
        for job in try await observer.jobs(JobsQuery(states: [.running])).jobs {
            try await observer.cancel(job: job.job)
        }
        #expect(await loopdError { _ = try await a.value }?.code == .cancelled)
        #expect(await loopdError { _ = try await b.value }?.code == .cancelled)
        #expect(try await c.value.state == .completed)
        #expect(try await observer.stats().accepted == 3)
        await client.close()
        await observer.close()
    }

    @Test func aCancelledTaskLeavesTheConnectionUsable() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath, configuration: .init(maxInFlight: 1))
        let observer = try await LoopdClient.connect(socketPath: d.socketPath)
        let slow = Task { try await client.submit("sleep", ["600000"], options: .init(placement: .worker("w1"))) }
        #expect(await eventually { try await observer.stats().running == 1 })
        // Another caller waits behind it (at most 1 in flight) and is cancelled before it is sent.
        let queued = Task { try await client.submit("echo", ["never sent"]) }
        try await Task.sleep(for: .milliseconds(50))
        queued.cancel()
        slow.cancel()
        await #expect(throws: CancellationError.self) { try await slow.value }
        await #expect(throws: CancellationError.self) { try await queued.value }
        // The connection carries on.
        #expect(try await client.submit("echo", ["after"], options: .init(placement: .worker("w2"))).output == "after")
        // The sleep ends (cancelled from elsewhere): its late reply to `client` is dropped.
        let sleeping = try #require(try await observer.jobs(JobsQuery(states: [.running])).jobs.first)
        #expect(try await observer.cancel(job: sleeping.job).cancelled)
        #expect(try await client.submit("echo", ["still"]).output == "still")
        #expect(try await client.ping().version == LoopdVersion.current)
        #expect(try await observer.stats().accepted == 3, "the cancelled queued request was sent")
        await client.close()
        await observer.close()
    }

    @Test func theDaemonRestartingUnderAConnectedClient() async throws {
        let first = TestDaemon()
        let client = try await LoopdClient.connect(socketPath: first.socketPath)
        _ = try await client.ping()
        let delayed = try await client.submit("noop", options: .init(wait: false, delayMs: 60_000))
        async let waiting = loopdError { _ = try await client.wait(job: delayed.job) }
        try await Task.sleep(for: .milliseconds(50))
        first.stop()
        let inFlight = await waiting
        #expect(inFlight?.code == .connectionClosed)
        #expect(await loopdError { _ = try await client.ping() }?.code == .connectionClosed)
        #expect(!client.isConnected)
        // Nothing listens now: reconnecting says so.
        #expect(await loopdError { try await client.reconnect() }?.code == .cannotConnect)

        let second = TestDaemon(directory: first.directory)
        defer { second.stop() }
        try await client.reconnect()
        #expect(client.isConnected)
        #expect(try await client.submit("echo", ["back"]).output == "back")
        await client.close()
        try? FileManager.default.removeItem(atPath: first.directory)
    }

    @Test func automaticReconnectAfterARestart() async throws {
        let first = TestDaemon()
        let client = try await LoopdClient.connect(socketPath: first.socketPath,
                                                   configuration: .init(reconnectsAutomatically: true))
        _ = try await client.ping()
        first.stop()
        #expect(await eventually { !client.isConnected })
        let second = TestDaemon(directory: first.directory)
        defer { second.stop() }
        #expect(try await client.ping().version == LoopdVersion.current)
        await client.close()
        try? FileManager.default.removeItem(atPath: first.directory)
    }
}
