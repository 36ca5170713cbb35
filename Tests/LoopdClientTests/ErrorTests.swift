import Foundation
import Glibc
import LoopdClient
import Testing

/// The error a call throws, as a `LoopdError` (nil: it did not throw one).
func loopdError(_ body: () async throws -> Void) async -> LoopdError? {
    do {
        try await body()
        return nil
    } catch let error as LoopdError {
        return error
    } catch {
        Issue.record("not a LoopdError: \(error)")
        return nil
    }
}

@Suite("LoopdClient: every reachable error code")
struct ErrorTests {
    @Test func refusalsLeaveTheConnectionUsable() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let badRequest = await loopdError { _ = try await client.jobs(JobsQuery(cursor: "not-a-cursor")) }
        #expect(badRequest?.code == .badRequest && badRequest?.job == nil)
        let badArgs = await loopdError { try await client.submit("noop", ["unexpected"]) }
        #expect(badArgs?.code == .badRequest)
        // Fields the client has no property for go out as given.
        let extra = SubmitOptions(additionalFields: [("colour", "blue")])
        let unknownField = await loopdError { try await client.submit("echo", options: extra) }
        #expect(unknownField?.code == .badRequest && unknownField?.message.contains("colour") == true)
        let unknownOp = try await client.send(op: "frobnicate")
        #expect(unknownOp.error?.code == .unknownOp)
        #expect(await loopdError { try await client.submit("nonexistent") }?.code == .unknownAction)
        #expect(await loopdError { try await client.submit("echo", options: .init(placement: .worker("w9"))) }?.code
                    == .unknownWorker)
        #expect(await loopdError { _ = try await client.inspect(worker: "w9") }?.code == .unknownWorker)
        #expect(await loopdError { try await client.mode(worker: "w9", mode: "m") }?.code == .unknownWorker)
        #expect(await loopdError { _ = try await client.status(job: "no-such-job") }?.code == .unknownJob)
        #expect(await loopdError { _ = try await client.wait(job: "no-such-job") }?.code == .unknownJob)
        #expect(await loopdError { try await client.cancel(job: "no-such-job") }?.code == .unknownJob)
        #expect(try await client.ping().version == LoopdVersion.current)
        await client.close()
    }

    @Test func jobOutcomesCarryTheJob() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let failed = await loopdError { try await client.submit("fail", ["broken", "on", "purpose"]) }
        #expect(failed?.code == .jobFailed && failed?.message == "broken on purpose")
        #expect(failed?.job?.state == .failed && failed?.job?.result == .object([]))

        // With retries, `status` lists each failed attempt and their count.
        let retried = await loopdError {
            try await client.submit("fail", ["again"], options: .init(retries: 1, retryBackoffMs: 1))
        }
        let history = try await client.status(job: try #require(retried?.job?.job))
        #expect(history.attempt == 2 && history.retries == 1)
        #expect(history.attempts.map(\.attempt) == [1, 2] && history.attempts.allSatisfy { $0.code == "job_failed" })
        #expect(history.attempts.allSatisfy { $0.message == "again" && $0.finishedAt != nil })

        let timedOut = await loopdError { try await client.submit("sleep", ["5000"], options: .init(timeoutMs: 20)) }
        #expect(timedOut?.code == .timeout && timedOut?.job?.state == .timedOut)

        // A waited job cancelled from another request: the waiter gets `cancelled`.
        let sleeper = try await client.submit("sleep", ["600000"], options: .init(placement: .worker("w1"), wait: false))
        async let waited = loopdError { _ = try await client.wait(job: sleeper.job) }
        #expect(await eventually { try await client.status(job: sleeper.job).state == .running })
        let cancel = try await client.cancel(job: sleeper.job)
        #expect(cancel.cancelled && cancel.started)
        let cancelled = await waited
        #expect(cancelled?.code == .cancelled && cancelled?.job?.job == sleeper.job && cancelled?.job?.state == .cancelled)
        await client.close()
    }

    @Test func queueFull() async throws {
        let d = TestDaemon { $0.limits.maxQueuedJobsPerWorker = 2 }
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        try await client.mode(worker: "w1", mode: "maintenance")
        for _ in 0..<2 { try await client.submit("echo", options: .init(placement: .worker("w1"), wait: false)) }
        #expect(await loopdError { try await client.submit("echo", options: .init(placement: .worker("w1"))) }?.code
                    == .queueFull)
        try await client.mode(worker: "w1", mode: "default")
        await client.close()
    }

    @Test func tooLargeClosesTheConnectionAndReconnectRecovers() async throws {
        let d = TestDaemon { $0.limits.maxLineBytes = 4096 }
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let error = await loopdError { try await client.submit("echo", [String(repeating: "x", count: 8192)]) }
        #expect(error?.code == .tooLarge)
        #expect(await eventually { !client.isConnected })
        #expect(await loopdError { _ = try await client.ping() }?.code == .tooLarge)
        try await client.reconnect()
        #expect(try await client.ping().version == LoopdVersion.current)
        await client.close()
    }

    @Test func busyWhenTheDaemonHasItsConnections() async throws {
        let d = TestDaemon { $0.limits.maxConnections = 1 }
        defer { d.stop() }
        let first = try await LoopdClient.connect(socketPath: d.socketPath)
        _ = try await first.ping()
        let second = try await LoopdClient.connect(socketPath: d.socketPath)
        #expect(await loopdError { _ = try await second.ping() }?.code == .busy)
        _ = try await first.ping()
        await first.close()
        await second.close()
    }

    @Test func shuttingDownRefusesSubmits() async throws {
        // Stopping waits (up to the grace period) for the running job.
        let d = TestDaemon { $0.server.shutdownGraceMs = 600_000 }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let sleeper = try await client.submit("sleep", ["600000"], options: .init(wait: false))
        #expect(await eventually { try await client.status(job: sleeper.job).state == .running })
        let stopping = Thread { d.stop() }
        stopping.start()
        var refused: LoopdError?
        _ = await eventually {
            refused = await loopdError { try await client.submit("noop") }
            return refused != nil
        }
        #expect(refused?.code == .shuttingDown)
        #expect(try await client.cancel(job: sleeper.job).cancelled)
        #expect(await eventually { !client.isConnected })
        await client.close()
    }

    @Test func cannotConnectSaysWhy() async throws {
        let error = await loopdError { _ = try await LoopdClient.connect(socketPath: "/nonexistent/loopd.sock") }
        #expect(error?.code == .cannotConnect && error?.errno == ENOENT)
        let unconnected = LoopdClient(socketPath: "/nonexistent/loopd.sock")
        #expect(await loopdError { _ = try await unconnected.ping() }?.code == .connectionClosed)
    }

    @Test func theCodesMirrorTheProtocol() {
        for code in ErrorCode.allCases {
            let mirrored = LoopdError.Code(code)
            #expect(mirrored.errorCode == code && mirrored.description == code.rawValue && mirrored.isFromDaemon)
            #expect(LoopdError.Code(wireValue: code.rawValue) == mirrored)
        }
        #expect(LoopdError.Code(wireValue: "a_code_from_the_future") == .unknown("a_code_from_the_future"))
        #expect(!LoopdError.Code.connectionClosed.isFromDaemon)
    }
}

@Suite("LoopdClient: the scheduling fields of submit")
struct SchedulingOptionTests {
    @Test func aUniqueKeyReturnsTheFirstJobAndAnExpiredJobThrowsExpired() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        // unique_key: the second submit with the key gets the first job back.
        let keyed = SubmitOptions(wait: false, delayMs: 60_000, priority: 7, retries: 1, retryBackoffMs: 10,
                                  uniqueKey: "order-42")
        let first = try await client.submit("echo", ["one"], options: keyed)
        let second = try await client.submit("echo", ["two"], options: keyed)
        #expect(second.job == first.job && second.duplicate && !first.duplicate)
        let status = try await client.send(op: "status", [("job", .string(first.job))])
        #expect(status.json["priority"] == .integer(7) && status.json["unique_key"] == .string("order-42"))
        try await client.cancel(job: first.job)
        // expires_in_ms: a delayed job that cannot start in time ends expired.
        var expiring = SubmitOptions(delayMs: 60_000, expiresInMs: 50)
        expiring.wait = true
        let expired = await loopdError { try await client.submit("echo", ["late"], options: expiring) }
        #expect(expired?.code == .expired && expired?.job?.state == .expired)
        await client.close()
    }
}
