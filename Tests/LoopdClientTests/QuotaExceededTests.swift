import Foundation
import Glibc
import LoopdClient
import Testing

/// `quota_exceeded` reaches the Swift client as `.quotaExceeded`, from a
/// real loopd: quotas bind every uid but root and the daemon's own, so the
/// client connects as `nobody` (`ForbiddenTests.connect`).
@Suite("LoopdClient: quota_exceeded, for a client of another uid")
struct QuotaExceededTests {
    @Test(.enabled(if: getuid() == 0, "needs root to connect as another uid"))
    func aJobBeyondTheUsersQuotaIsRefusedAndTheFirstIsKept() async throws {
        let d = TestDaemon {
            $0.server.socketMode = 0o666
            $0.quotas.maxJobs = 1
        }
        defer { d.stop() }
        chmod(d.directory, 0o755)
        let (user, group) = try await ForbiddenTests.connect(d.socketPath, uid: ForbiddenTests.nobody,
                                                             gid: ForbiddenTests.nobody)
        let kept = try await user.submit("noop", options: SubmitOptions(wait: false, delayMs: 60_000))
        let refused = await loopdError { try await user.submit("noop", options: SubmitOptions(wait: false)) }
        #expect(refused?.code == .quotaExceeded && refused?.code.isFromDaemon == true && refused?.job == nil)
        #expect(refused?.message.contains("quotas.max_jobs is 1") == true, "\(String(describing: refused))")
        #expect(try await user.status(job: kept.job).state == .delayed)
        try await user.cancel(job: kept.job)
        #expect(try await user.submit("echo", ["again"]).output == "again")
        await user.close()
        try await group.shutdownGracefully()
    }
}
