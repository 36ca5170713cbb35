import Foundation
import LoopdClient
import Testing

/// Job usage: an exec job's CPU time and peak memory, as `status`, `jobs`,
/// a waited submit (and its error, for a job that failed) report them.
@Suite("LoopdClient: what an exec job used")
struct JobUsageTests {
    /// A daemon with `spin`, a shell that counts to 100,000 (some CPU
    /// time, no output), and `exit3`, a shell that fails.
    static func daemon() -> TestDaemon {
        TestDaemon { config in
            config.addExecAction("spin", argv: ["/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            config.addExecAction("exit3", argv: ["/bin/sh", "-c", "exit 3"])
        }
    }

    @Test func anExecJobsUsageIsInItsWaitedReplyItsStatusAndItsJobsEntry() async throws {
        let d = Self.daemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let done = try await client.submit("spin", options: SubmitOptions(placement: .worker("w2")))
        let usage = try #require(done.usage, "a waited exec job's reply has no usage")
        #expect(usage.source == .cgroup || usage.source == .rusage, "\(usage.source)")
        #expect(usage.cpuUserUsec >= 0 && usage.cpuSystemUsec >= 0 && usage.cpuUsec == usage.cpuUserUsec + usage.cpuSystemUsec)
        #expect(usage.cpuUsec > 0, "a shell counting to 100000 used no CPU time")
        #expect(usage.memoryPeakBytes.map { $0 > 0 } ?? true)

        #expect(try await client.status(job: done.job).usage == usage)
        #expect(try await client.wait(job: done.job).usage == usage)
        let listed = try await client.jobs(JobsQuery(action: "spin")).jobs
        #expect(listed.map(\.job) == [done.job] && listed.first?.usage == usage)
        await client.close()
    }

    @Test func aFailedExecJobsErrorCarriesItsUsage() async throws {
        let d = Self.daemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let error = await loopdError { try await client.submit("exit3") }
        #expect(error?.code == .jobFailed)
        let usage = try #require(error?.job?.usage, "\(String(describing: error))")
        #expect(usage.source == .cgroup || usage.source == .rusage)
        let job = try #require(error?.job?.job)
        #expect(try await client.status(job: job).usage == usage)
        await client.close()
    }

    @Test func builtInActionsAndJobsThatNeverRanHaveNoUsage() async throws {
        let d = Self.daemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let echo = try await client.submit("echo", ["x"])
        #expect(echo.usage == nil)
        #expect(try await client.status(job: echo.job).usage == nil)
        let parked = try await client.submit("spin", options: SubmitOptions(wait: false, delayMs: 60_000))
        #expect(parked.usage == nil)
        try await client.cancel(job: parked.job)
        #expect(try await client.status(job: parked.job).usage == nil)
        await client.close()
    }
}
