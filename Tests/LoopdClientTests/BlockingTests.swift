import Foundation
import Glibc
import LoopdClient
import Testing

/// The error a blocking call throws, as a `LoopdError` (nil: it did not throw one).
func blockingError(_ body: () throws -> Void) -> LoopdError? {
    do {
        try body()
        return nil
    } catch let error as LoopdError {
        return error
    } catch {
        Issue.record("not a LoopdError: \(error)")
        return nil
    }
}

@Suite("LoopdClient.Blocking: what a command-line tool needs")
struct BlockingTests {
    @Test func startedRequestsAreOnTheWireTogetherAndTheirRepliesCollectedInAnyOrder() throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try LoopdClient.Blocking(socketPath: d.socketPath)
        let slow = client.start(op: "submit", [("action", "sleep"), ("args", ["600000"]), ("worker", "w1")])
        let quick = client.start(op: "ping")
        #expect(quick.id == slow.id + 1)
        // Answered while the sleep runs: the daemon read the submit first, so the job exists.
        let pong = try client.reply(to: quick)
        #expect(pong.ok && pong.line.hasPrefix(#"{"id":\#(quick.id),"ok":true"#))
        let sleeping = try #require(try client.jobs().jobs.first)
        #expect(sleeping.action == "sleep" && !sleeping.state.isFinal)
        #expect(try client.cancel(job: sleeping.job).cancelled)
        // Refusals and job outcomes are replies too, not thrown.
        let slept = try client.reply(to: slow)
        #expect(!slept.ok && slept.error?.code == .cancelled && slept.error?.job?.job == sleeping.job)
        let refused = client.start(op: "status", [("job", "no-such-job")])
        #expect(try client.reply(to: refused).error?.code == .unknownJob)
        try client.close()
    }

    @Test func aReplyTimeoutGivesUpOnTheRequestAndTheConnectionCarriesOn() throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try LoopdClient.Blocking(socketPath: d.socketPath, replyTimeout: .milliseconds(100))
        #expect(client.replyTimeout == .milliseconds(100))
        let parked = try client.submit("noop", options: SubmitOptions(wait: false, delayMs: 60_000))
        let started = ContinuousClock.now
        let error = blockingError { _ = try client.wait(job: parked.job) }
        #expect(error?.code == .replyTimedOut && error?.code.isFromDaemon == false)
        #expect(error?.code.description == "reply_timed_out")
        #expect(ContinuousClock.now - started < .seconds(10))
        // A started request too; its late reply is dropped.
        let waiting = client.start(op: "wait", [("job", .string(parked.job))])
        #expect(blockingError { _ = try client.reply(to: waiting) }?.code == .replyTimedOut)
        #expect(try client.cancel(job: parked.job).cancelled)
        #expect(try client.ping().version == LoopdVersion.current)
        #expect(try client.submit("echo", ["after"]).output == "after")
        try client.close()
    }

    @Test func closingWithoutWaitingClosesSoonAndFailsWhatIsInFlight() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let observer = try await LoopdClient.connect(socketPath: d.socketPath)
        let client = try LoopdClient.Blocking(socketPath: d.socketPath)
        let parked = try client.submit("noop", options: SubmitOptions(wait: false, delayMs: 60_000))
        let waiting = client.start(op: "wait", [("job", .string(parked.job))])
        client.closeWithoutWaiting()
        #expect(await eventually { try await observer.stats().connections == 1 })
        #expect(blockingError { _ = try client.reply(to: waiting) }?.code == .connectionClosed)
        #expect(!client.client.isConnected)
        try await observer.cancel(job: parked.job)
        await observer.close()
    }

    @Test func aRefusedConnectionAnswersEveryRawRequestWithTheRefusal() throws {
        let d = TestDaemon { $0.limits.maxConnections = 1 }
        defer { d.stop() }
        let first = try LoopdClient.Blocking(socketPath: d.socketPath)
        _ = try first.ping()
        // The refusal may come before or after the request is written: the same either way.
        for _ in 0..<20 {
            let second = try LoopdClient.Blocking(socketPath: d.socketPath)
            let refused = try second.send(op: "ping")
            #expect(!refused.ok && refused.error?.code == .busy)
            #expect(refused.line.hasPrefix(#"{"id":null,"ok":false,"error":{"code":"busy""#))
            #expect(try second.send(op: "stats").line == refused.line)
            #expect(blockingError { _ = try second.ping() }?.code == .busy)
            try second.close()
        }
        try first.close()
    }

    @Test func aLineOverTheDaemonsLimitIsAnsweredAtOnceWhenItIsTheOnlyRequest() throws {
        let d = TestDaemon { $0.limits.maxLineBytes = 4096 }
        defer { d.stop() }
        let client = try LoopdClient.Blocking(socketPath: d.socketPath)
        let reply = try client.send(op: "submit", [("action", "echo"), ("args", [.string(String(repeating: "x", count: 8192))])])
        #expect(!reply.ok && reply.error?.code == .tooLarge && reply.json["id"] == .null)
        try client.close()
    }

    @Test func cannotConnectKeepsTheErrno() {
        let missing = blockingError { _ = try LoopdClient.Blocking(socketPath: "/nonexistent/loopd.sock") }
        #expect(missing?.code == .cannotConnect && missing?.errno == ENOENT)
        let long = "/tmp/" + String(repeating: "x", count: 200) + ".sock"
        let tooLong = blockingError { _ = try LoopdClient.Blocking(socketPath: long) }
        #expect(tooLong?.code == .cannotConnect && tooLong?.errno == ENAMETOOLONG)
    }
}
