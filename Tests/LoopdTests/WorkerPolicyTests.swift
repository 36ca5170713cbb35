import Testing
@testable import LoopdCore

/// An explicit worker is a lane kept for someone (docs/OPERATIONS.md,
/// "Placement and the maintenance lane"): it takes jobs only from the
/// administrators and from the users and groups its own `allow_users` and
/// `allow_groups` name. The same rule through a real daemon and real uids:
/// `UserIsolationTests.anExplicitWorkerTakesJobsOnlyFromItsAllowLists`.
@Suite("Who may name an explicit worker")
struct WorkerPolicyTests {
    static let daemon: UInt32 = 999
    static let alice: UInt32 = 1000
    static let bob: UInt32 = 1001

    private func parse(_ workers: String, server: String = "") throws(ConfigError) -> DaemonConfig {
        try ConfigLoader.parse("[server]\n\(server)\n[[workers]]\nname = \"w1\"\n" + workers, origin: "t.toml")
    }

    @Test("without allow lists, administrators only; an auto worker takes everyone's jobs")
    func administratorsOnlyByDefault() throws {
        let c = try parse("[[workers]]\nname = \"ops\"\nplacement = \"explicit\"\n", server: "admin_users = [1001]")
        #expect(c.permits(worker: "w1", uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
        #expect(!c.permits(worker: "ops", uid: Self.alice, gid: Self.alice, supplementaryGroups: [0], daemonUID: Self.daemon))
        #expect(c.permits(worker: "ops", uid: Self.bob, gid: Self.bob, daemonUID: Self.daemon))
        #expect(c.permits(worker: "ops", uid: 0, gid: 0, daemonUID: Self.daemon))
        #expect(c.permits(worker: "ops", uid: Self.daemon, gid: 5, daemonUID: Self.daemon))
    }

    @Test("allow_users by uid or name, allow_groups by primary or supplementary gid, \"*\" for everyone")
    func allowLists() throws {
        let c = try parse("""
            [[workers]]
            name = "ops"
            placement = "explicit"
            allow_users = [1000, "root"]
            allow_groups = [50]
            [[workers]]
            name = "open"
            placement = "explicit"
            allow_users = ["*"]
            """)
        let ops = try #require(c.workers.first { $0.name == "ops" })
        #expect(ops.allowUsers == [1000, 0] && ops.allowGroups == [50] && !ops.allowAnyUser)
        #expect(c.permits(worker: "ops", uid: Self.alice, gid: Self.alice, daemonUID: Self.daemon))
        #expect(c.permits(worker: "ops", uid: Self.bob, gid: 50, daemonUID: Self.daemon))
        #expect(c.permits(worker: "ops", uid: Self.bob, gid: Self.bob, supplementaryGroups: [3, 50], daemonUID: Self.daemon))
        #expect(!c.permits(worker: "ops", uid: Self.bob, gid: Self.bob, supplementaryGroups: [3], daemonUID: Self.daemon))
        #expect(!c.permits(worker: "ops", uid: Self.bob, gid: nil, daemonUID: Self.daemon))
        #expect(c.permits(worker: "open", uid: Self.bob, gid: nil, daemonUID: Self.daemon))
    }

    @Test("allow lists on an auto worker, unknown names and \"*\" as a group are config errors naming the key")
    func invalid() {
        for (lines, key, phrase) in [
            ("allow_users = [1000]", "workers[1].allow_users", #"only a worker with placement = "explicit""#),
            ("placement = \"auto\"\nallow_groups = [50]", "workers[1].allow_groups", "only a worker with placement"),
            ("placement = \"explicit\"\nallow_users = [\"no-such-user-loopd\"]", "workers[1].allow_users[0]", "no user named"),
            ("placement = \"explicit\"\nallow_groups = [\"*\"]", "workers[1].allow_groups[0]", "not a group"),
            ("placement = \"explicit\"\nallow_users = [\"*\", 5]", "workers[1].allow_users[0]", "only entry"),
            ("placement = \"explicit\"\nallow_user = [5]", "workers[1].allow_user", #"did you mean "allow_users"?"#),
        ] {
            do {
                _ = try parse("[[workers]]\nname = \"ops\"\n" + lines + "\n")
                Issue.record("accepted \(lines)")
            } catch {
                #expect(error.key == key, "\(lines): \(error)")
                #expect(error.description.contains(phrase), "\(error)")
            }
        }
    }
}
