import Foundation
import LoopdClient
import Testing

@Suite("LoopdClient: every operation against a real loopd")
struct OperationTests {
    @Test func pingAnswersPidAndVersion() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let pong = try await client.ping()
        #expect(pong.pid == Int64(getpid()))
        #expect(pong.version == LoopdVersion.current)
        await client.close()
    }

    @Test func submitWaitStatusAndCancel() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let echo = try await client.submit("echo", ["hello", "world"])
        #expect(echo.state == .completed && echo.output == "hello world" && echo.worker != nil)

        let keyed = try await client.submit("noop", options: SubmitOptions(placement: .key("user-7"), mode: "common"))
        #expect(keyed.state == .completed && keyed.result == .object([]))

        // Not waited for: accepted; `wait` gets its outcome.
        let later = try await client.submit("echo", ["later"], options: SubmitOptions(placement: .worker("w2"), wait: false))
        #expect(later.state == .queued && later.worker == "w2" && later.result == nil)
        let waited = try await client.wait(job: later.job)
        #expect(waited.state == .completed && waited.output == "later")

        let status = try await client.status(job: later.job)
        #expect(status.state == .completed && status.action == "echo" && status.worker == "w2")
        #expect(status.submittedAt != nil && status.startedAt != nil && status.finishedAt != nil)
        #expect(status.queueMs != nil && status.runMs != nil && status.result?["output"] == "later")
        #expect(status.error == nil && status.cancelledBy == nil && !status.durable)
        // `status` names the arguments and the submitter; `jobs` leaves them out.
        #expect(status.args == ["later"] && status.submittedBy == Int64(getuid()))
        #expect(status.attempt == 1 && status.retries == 0 && status.attempts.isEmpty && status.retryOf == nil)
        let listed = try await client.jobs(JobsQuery(worker: "w2")).jobs.first { $0.job == later.job }
        #expect(listed?.args == nil && listed?.submittedBy == nil)

        // Delayed for a minute: `wait` with a timeout sees it still delayed; `cancel` ends it.
        let parked = try await client.submit("noop", options: SubmitOptions(wait: false, delayMs: 60_000, durable: true))
        #expect(parked.state == .delayed)
        #expect(try await client.wait(job: parked.job, timeoutMs: 1).state == .delayed)
        let cancel = try await client.cancel(job: parked.job)
        #expect(cancel.job == parked.job && cancel.cancelled && cancel.state == .cancelled && !cancel.started)
        let cancelledStatus = try await client.status(job: parked.job)
        #expect(cancelledStatus.state == .cancelled && cancelledStatus.durable)
        #expect(cancelledStatus.error?.code == .cancelled && cancelledStatus.cancelledBy == 0)
        let again = try await client.cancel(job: echo.job)
        #expect(!again.cancelled && again.state == .completed && again.started)
        await client.close()
    }

    @Test func jobsPagesAndTheSequenceOverAllPages() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        var ids: [String] = []
        for i in 0..<7 { ids.append(try await client.submit("echo", ["\(i)"]).job) }
        let first = try await client.jobs(JobsQuery(limit: 3))
        #expect(first.jobs.map(\.job) == Array(ids.prefix(3)) && first.nextCursor != nil)
        let second = try await client.jobs(JobsQuery(limit: 3, cursor: first.nextCursor))
        #expect(second.jobs.map(\.job) == Array(ids[3..<6]))

        var all: [String] = []
        for try await job in client.allJobs(JobsQuery(states: [.completed], action: "echo", limit: 2)) {
            all.append(job.job)
        }
        #expect(all == ids)
        let none = try await client.jobs(JobsQuery(states: [.running], worker: "w1",
                                                   submittedSinceUnixMs: 0))
        #expect(none.jobs.isEmpty && none.nextCursor == nil)
        await client.close()
    }

    @Test func workersInspectModeStatsMetrics() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let workers = try await client.workers()
        #expect(workers.map(\.name) == ["w1", "w2"])
        #expect(workers.allSatisfy { $0.mode == "default" && $0.placement == "auto" && $0.running == nil })

        let description = try await client.inspect(worker: "w1")
        #expect(description.contains("current mode"))

        let change = try await client.mode(worker: "w2", mode: "maintenance")
        #expect(change.worker == "w2" && change.mode == "maintenance" && change.previous == "default")
        #expect(try await client.workers().first { $0.name == "w2" }?.mode == "maintenance")
        try await client.mode(worker: "w2", mode: "default")

        try await client.submit("noop")
        let stats = try await client.stats()
        #expect(stats.accepted >= 1 && stats.completed >= 1 && stats.connections >= 1)
        #expect(stats.json["latency_us"]?["count"] != nil)

        let metrics = try await client.metrics()
        #expect(metrics.contentType.hasPrefix("text/plain"))
        #expect(metrics.text.contains("loopd_connections_open"))
        await client.close()
    }

    @Test func rawRequestsReturnTheReplyAsItCame() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let reply = try await client.send(op: "ping")
        #expect(reply.ok && reply.line.hasPrefix(#"{"id":"#) && reply.json["pid"] != nil)
        let refused = try await client.send(op: "submit", [("action", "echo"), ("colour", "blue")])
        #expect(!refused.ok && refused.error?.code == .badRequest)
        await client.close()
    }

    @Test func theBlockingFacadeForCommandLineTools() throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try LoopdClient.Blocking(socketPath: d.socketPath)
        #expect(try client.ping().version == LoopdVersion.current)
        let job = try client.submit("echo", ["hi"])
        #expect(job.output == "hi")
        #expect(try client.status(job: job.job).state == .completed)
        #expect(try client.allJobs().map(\.job) == [job.job])
        #expect(try client.workers().count == 2)
        do {
            try client.submit("nonexistent")
            Issue.record("no error")
        } catch let error as LoopdError {
            #expect(error.code == .unknownAction)
        }
        try client.close()
    }
}
