import CThreadCredentials
import Foundation
import Glibc
import LoopdClient
import NIOPosix
import Testing

/// `forbidden` needs a client the daemon does not trust: not root, not the
/// daemon's own uid (this process's), not in `server.admin_users` or
/// `server.admin_groups`. The daemon reads the client's uid and gid when it
/// connects (SO_PEERCRED), so the client's connection is made by its event
/// loop's thread while that thread, and only it, runs as `nobody`.
@Suite("LoopdClient: forbidden, for a client of another uid")
struct ForbiddenTests {
    static let nobody: UInt32 = 65534

    @Test(.enabled(if: getuid() == 0, "needs root to connect as another uid"))
    func anotherUsersRequestsAreForbiddenUntilTheConfigMakesItAnAdministrator() async throws {
        let d = TestDaemon { $0.server.socketMode = 0o666 }
        defer { d.stop() }
        chmod(d.directory, 0o755)
        let root = try await LoopdClient.connect(socketPath: d.socketPath)
        let parked = try await root.submit("noop", options: SubmitOptions(wait: false, delayMs: 60_000))

        let (stranger, group) = try await Self.connect(d.socketPath, uid: Self.nobody, gid: Self.nobody)
        let mode = await loopdError { try await stranger.mode(worker: "w1", mode: "maintenance") }
        #expect(mode?.code == .forbidden && mode?.code.isFromDaemon == true && mode?.job == nil)
        #expect(mode?.message.contains("may not switch worker modes") == true, "\(String(describing: mode))")
        // Another user's job does not exist for it: unknown_job, as an id never given out gets.
        #expect(await loopdError { _ = try await stranger.status(job: parked.job) }?.code == .unknownJob)
        #expect(await loopdError { try await stranger.cancel(job: parked.job) }?.code == .unknownJob)
        let raw = try await stranger.send(op: "mode", [("worker", "w1"), ("mode", "maintenance")])
        #expect(raw.error?.code == .forbidden && raw.json["error"]?["code"] == "forbidden")
        // Refused, not cut off: what every client may do still works.
        #expect(try await stranger.submit("echo", ["mine"]).output == "mine")
        #expect(try await root.workers().allSatisfy { $0.mode == "default" })
        try await root.cancel(job: parked.job)
        await stranger.close()
        await root.close()
        try await group.shutdownGracefully()

        // The same uid, listed in admin_users: allowed to switch modes.
        let trusting = TestDaemon {
            $0.server.socketMode = 0o666
            $0.server.adminUsers = [Self.nobody]
        }
        defer { trusting.stop() }
        chmod(trusting.directory, 0o755)
        let (admin, adminGroup) = try await Self.connect(trusting.socketPath, uid: Self.nobody, gid: Self.nobody)
        #expect(try await admin.mode(worker: "w1", mode: "maintenance").mode == "maintenance")
        await admin.close()
        try await adminGroup.shutdownGracefully()
    }

    /// A client connected by a thread running as `uid` and `gid`; its event
    /// loop (that thread) is root again before it is returned.
    static func connect(_ socketPath: String, uid: UInt32, gid: UInt32) async throws
        -> (LoopdClient, MultiThreadedEventLoopGroup) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        try await loop.submit { try becoming(uid, gid) }.get()
        let connected: Result<LoopdClient, any Error>
        do {
            connected = .success(try await LoopdClient.connect(socketPath: socketPath, eventLoopGroup: loop))
        } catch {
            connected = .failure(error)
        }
        try await loop.submit { try becoming(0, 0) }.get()
        return (try connected.get(), group)
    }
}

/// Sets the calling thread's effective uid and gid.
private func becoming(_ uid: UInt32, _ gid: UInt32) throws {
    guard cthreadcred_set_effective_ids(uid, gid) == 0 else {
        throw POSIXError(.init(rawValue: errno) ?? .EPERM)
    }
}
