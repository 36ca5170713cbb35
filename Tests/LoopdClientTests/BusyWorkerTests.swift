import Foundation
import Glibc
import LoopdClient
import Testing

/// Busy workers: `workers` tells every client whether a worker runs a job,
/// with the job's action and start, and the job's id only to who may see
/// the job (its owner, the administrators).
@Suite("LoopdClient: busy workers")
struct BusyWorkerTests {
    @Test func theOwnerSeesItsRunningJobWithItsActionAndStart() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let client = try await LoopdClient.connect(socketPath: d.socketPath)
        let idle = try #require(try await client.workers().first { $0.name == "w1" })
        #expect(!idle.busy && idle.running == nil && idle.runningAction == nil && idle.runningSince == nil)

        let job = try await client.submit("sleep", ["60000"], options: SubmitOptions(placement: .worker("w1"), wait: false))
        var w1: WorkerInfo?
        #expect(await eventually {
            w1 = try await client.workers().first { $0.name == "w1" }
            return w1?.running == job.job
        }, "w1 never showed the job running: \(String(describing: w1))")
        #expect(w1?.busy == true && w1?.runningAction == "sleep")
        let started = try await client.status(job: job.job).startedAt
        #expect(w1?.runningSince != nil && w1?.runningSince == started)
        try await client.cancel(job: job.job)
        await client.close()
    }

    @Test(.enabled(if: getuid() == 0, "needs root to connect as another uid"))
    func anotherUsersRunningJobIsBusyWithItsActionAndStartButWithoutItsID() async throws {
        let d = TestDaemon { $0.server.socketMode = 0o666 }
        defer { d.stop() }
        chmod(d.directory, 0o755)
        let root = try await LoopdClient.connect(socketPath: d.socketPath)
        let job = try await root.submit("sleep", ["60000"], options: SubmitOptions(placement: .worker("w1"), wait: false))
        #expect(await eventually { try await root.status(job: job.job).state == .running })
        let mine = try await root.workers()

        let (stranger, group) = try await ForbiddenTests.connect(d.socketPath, uid: ForbiddenTests.nobody,
                                                                 gid: ForbiddenTests.nobody)
        let theirs = try await stranger.workers()
        await stranger.close()
        try await group.shutdownGracefully()
        try await root.cancel(job: job.job)
        await root.close()

        let ours = try #require(mine.first { $0.name == "w1" }), busy = try #require(theirs.first { $0.name == "w1" })
        #expect(ours.running == job.job && ours.busy && ours.runningAction == "sleep" && ours.runningSince != nil)
        #expect(busy.running == nil && busy.busy)
        #expect(busy.runningAction == "sleep" && busy.runningSince == ours.runningSince)
        let idle = try #require(theirs.first { $0.name == "w2" })
        #expect(!idle.busy && idle.running == nil && idle.runningAction == nil && idle.runningSince == nil)
    }
}
