import Foundation
import LoopdProtocol
import Testing

/// Per-uid quotas (docs/OPERATIONS.md, "Sharing loopd between users"):
/// against the real binary running as a user of its own, with clients of
/// other uids, each quota refuses with `quota_exceeded` naming the key and
/// its value, loses nothing already accepted, and leaves other users alone.
@Suite(.serialized, .enabled(if: LoopdAsAnotherUser.isAvailable, LoopdAsAnotherUser.unavailableReason))
struct QuotaTests {
    static let quotas = """
        max_jobs = 3
        max_arg_bytes = 4096
        max_durable_retained_bytes = 4096
        max_connections = 3
        max_waits = 2
        """

    static func delayed(_ id: Int, args: String = "[]") -> String {
        #"{"id":\#(id),"op":"submit","action":"echo","args":\#(args),"worker":"w1","delay_ms":600000,"wait":false}"#
    }

    /// `quotas.max_jobs`: a user's fourth job not ended is refused; the
    /// three it has stay, another user and root submit as before, an
    /// administrator by `server.admin_users` is held to it too, and a job
    /// that ends frees its place.
    @Test func maxJobsRefusesTheJobBeyondItAndKeepsTheOthers() throws {
        let d = try LoopdAsAnotherUser(server: "admin_users = [\(Account.sys.uid)]", quotas: Self.quotas)
        defer { d.stop() }
        let user = try d.client(as: .nobody), other = try d.client(as: .bin)
        let jobs = try (1...3).map { try #require(user.call(Self.delayed($0))?["job"]?.stringValue) }
        let refused = try #require(user.call(Self.delayed(4)))
        #expect(refused.errorCode == "quota_exceeded" && refused["job"] == nil)
        let message = refused["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("quotas.max_jobs is 3") && message.contains("uid \(Account.nobody.uid)"), "\(message)")
        for job in jobs { #expect(user.call(#"{"id":5,"op":"status","job":"\#(job)"}"#)?["state"] == "delayed") }
        #expect(other.call(Self.delayed(6))?.ok == true, "another user is not held to nobody's count")

        let admin = try d.client(as: .sys)
        for i in 1...3 { #expect(admin.call(Self.delayed(i))?.ok == true) }
        #expect(admin.call(Self.delayed(4))?.errorCode == "quota_exceeded", "administrators are held to the quotas")
        let root = try d.client(as: .root)
        for i in 1...4 { #expect(root.call(Self.delayed(i))?.ok == true, "root is exempt") }

        #expect(user.call(#"{"id":7,"op":"cancel","job":"\#(jobs[0])"}"#)?["cancelled"] == true)
        #expect(user.call(Self.delayed(8))?.ok == true, "an ended job frees its place")
    }

    /// `quotas.max_arg_bytes`: a submit whose arguments would take the
    /// user past it is refused; a job that fits still runs.
    @Test func maxArgBytesRefusesArgumentsBeyondIt() throws {
        let d = try LoopdAsAnotherUser(quotas: Self.quotas)
        defer { d.stop() }
        let user = try d.client(as: .wwwData)
        let big = #"["\#(String(repeating: "x", count: 3000))"]"#
        let first = try #require(user.call(Self.delayed(1, args: big)))
        #expect(first.ok == true)
        let refused = try #require(user.call(Self.delayed(2, args: big)))
        #expect(refused.errorCode == "quota_exceeded")
        #expect(refused["error"]?["message"]?.stringValue?.contains("quotas.max_arg_bytes is 4096") == true, "\(refused)")
        #expect(user.call(#"{"id":3,"op":"submit","action":"echo","args":["small"]}"#)?["result"]?["output"] == "small")
        let job = try #require(first["job"]?.stringValue)
        #expect(user.call(#"{"id":4,"op":"status","job":"\#(job)"}"#)?["state"] == "delayed")
    }

    /// `quotas.max_durable_retained_bytes`: once a user's finished durable
    /// jobs hold that much, a durable submit is refused; their ends stay
    /// answerable, and a job that is not durable still runs.
    @Test func maxDurableRetainedBytesRefusesTheNextDurableJob() throws {
        let d = try LoopdAsAnotherUser(quotas: Self.quotas)
        defer { d.stop() }
        let user = try d.client(as: .bin)
        let output = String(repeating: "y", count: 3000)
        let durable = #"{"id":1,"op":"submit","action":"echo","args":["\#(output)"],"durable":true}"#
        let ended = try (1...2).map { _ in try #require(user.call(durable)?["job"]?.stringValue) }
        // An end counts once its journal commit (that pass's) is done.
        #expect(waitUntil { user.call(#"{"id":"s","op":"stats"}"#)?["journal"]?["retained_finished"] == 2 })
        let refused = try #require(user.call(durable))
        #expect(refused.errorCode == "quota_exceeded" && refused["job"] == nil)
        #expect(refused["error"]?["message"]?.stringValue?.contains("quotas.max_durable_retained_bytes is 4096") == true,
                "\(refused)")
        for job in ended { #expect(user.call(#"{"id":2,"op":"status","job":"\#(job)"}"#)?["state"] == "completed") }
        #expect(user.call(#"{"id":3,"op":"submit","action":"echo","args":["x"]}"#)?.ok == true)
        #expect(user.call(#"{"id":4,"op":"stats"}"#)?["journal"]?["retained_finished_bytes"]?.integerValue ?? 0 > 4096)
    }

    /// `quotas.max_waits`: a third parked `wait` is refused at once; the
    /// two parked ones are answered when the job ends.
    @Test func maxWaitsRefusesTheWaitBeyondIt() throws {
        let d = try LoopdAsAnotherUser(quotas: Self.quotas)
        defer { d.stop() }
        let user = try d.client(as: .nobody), waiter = try d.client(as: .nobody)
        let job = try #require(user.call(Self.delayed(1))?["job"]?.stringValue)
        waiter.send(#"{"id":"a","op":"wait","job":"\#(job)"}"#)
        waiter.send(#"{"id":"b","op":"wait","job":"\#(job)","timeout_ms":600000}"#)
        let refused = try #require(waiter.call(#"{"id":"c","op":"wait","job":"\#(job)"}"#))
        #expect(refused["id"] == "c" && refused.errorCode == "quota_exceeded", "\(refused)")
        #expect(refused["error"]?["message"]?.stringValue?.contains("quotas.max_waits is 2") == true)
        #expect(user.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#)?["cancelled"] == true)
        let answered = [waiter.readReply(), waiter.readReply()]
        #expect(Set(answered.compactMap { $0?["id"]?.stringValue }) == ["a", "b"])
        #expect(answered.allSatisfy { $0?.errorCode == "cancelled" })
        // Answered waits are no longer counted.
        let next = try #require(user.call(Self.delayed(3))?["job"]?.stringValue)
        waiter.send(#"{"id":"d","op":"wait","job":"\#(next)","timeout_ms":1}"#)
        #expect(waiter.readReply()?["state"] == "delayed")
    }

    /// `quotas.max_connections`: a user's connection beyond it gets one
    /// `quota_exceeded` line without an id and is closed; the open ones
    /// and other users' connections carry on.
    @Test func maxConnectionsRefusesTheConnectionBeyondIt() throws {
        let d = try LoopdAsAnotherUser(quotas: Self.quotas)
        defer { d.stop() }
        let open = try (1...3).map { _ in try d.client(as: .nobody) }
        for c in open { #expect(c.call(#"{"id":1,"op":"ping"}"#)?.ok == true) }
        let refused = try d.client(as: .nobody)
        let line = try #require(refused.readReply())
        #expect(line["id"] == .null && line.errorCode == "quota_exceeded", "\(line)")
        #expect(line["error"]?["message"]?.stringValue?.contains("quotas.max_connections is 3") == true)
        #expect(refused.isClosedByPeer())
        for c in open { #expect(c.call(#"{"id":2,"op":"ping"}"#)?.ok == true) }
        #expect(try d.client(as: .bin).call(#"{"id":3,"op":"ping"}"#)?.ok == true)
    }

    /// Hostile input against a quota: 2,000 submits pipelined at once past
    /// `max_jobs` are answered request by request, exactly three accepted
    /// and every other refused with `quota_exceeded`, while another user
    /// is served.
    @Test func aPipelinedSubmitFloodPastTheQuotaIsRefusedRequestByRequest() throws {
        let d = try LoopdAsAnotherUser(quotas: Self.quotas)
        defer { d.stop() }
        let user = try d.client(as: .nobody), other = try d.client(as: .bin)
        let count = 2000
        var batch: [UInt8] = []
        for i in 0..<count { batch += Array((Self.delayed(i) + "\n").utf8) }
        user.send(raw: batch)
        var accepted = 0, refused = 0
        var seen = Set<Int64>()
        for _ in 0..<count {
            let r = try #require(user.readReply(), "\(seen.count) of \(count) replies")
            let fresh = seen.insert(r["id"]?.integerValue ?? -1).inserted
            #expect(fresh, "an id answered twice")
            if r.ok == true { accepted += 1 } else if r.errorCode == "quota_exceeded" { refused += 1 }
        }
        #expect(accepted == 3 && refused == count - 3)
        #expect(other.call(#"{"id":"p","op":"submit","action":"echo","args":["served"]}"#)?["result"]?["output"] == "served")
        let listed = user.call(#"{"id":"l","op":"jobs","state":"delayed"}"#)?["jobs"]?.arrayValue?.count
        #expect(listed == 3, "the accepted jobs are all there")
    }
}
