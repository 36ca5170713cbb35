import Foundation
import LoopdProtocol
import Testing

/// Sharing loopd between users (docs/OPERATIONS.md): against the real
/// binary running as a user of its own, with clients of other uids, what
/// one user can and cannot see or do of another's work.
@Suite(.serialized, .enabled(if: LoopdAsAnotherUser.isAvailable, LoopdAsAnotherUser.unavailableReason))
struct UserIsolationTests {
    /// An id that names no job (13 base-36 digits, like every id of a run).
    static let missing = "0000000000000"

    /// Every request that names a job gets, for another user's job, the
    /// reply a missing id gets, byte for byte: `status`, `wait`, `cancel`.
    /// A `unique_key` another user used makes a new job, answered as a key
    /// nobody used is. `jobs` lists none of another user's jobs, whatever
    /// the filters. The owner and the administrators still see the job.
    @Test func anotherUsersJobIsAnsweredExactlyAsAMissingOne() throws {
        let d = try LoopdAsAnotherUser(server: "admin_users = [\(Account.sys.uid)]")
        defer { d.stop() }
        let owner = try d.client(as: .nobody), other = try d.client(as: .bin), admin = try d.client(as: .sys)
        let submitted = try #require(owner.call(
            #"{"id":1,"op":"submit","action":"echo","args":["secret"],"worker":"w1","delay_ms":600000,"wait":false,"unique_key":"nightly"}"#))
        let job = try #require(submitted["job"]?.stringValue)

        for op in [#""op":"status""#, #""op":"wait""#, #""op":"cancel""#] {
            let theirs = rawReply(other, #"{"id":"q",\#(op),"job":"\#(job)"}"#)
            let none = rawReply(other, #"{"id":"q",\#(op),"job":"\#(Self.missing)"}"#)
            #expect(theirs == none, "\(op): another user's job \(theirs) / a missing id \(none)")
            #expect(none.contains(#""code":"unknown_job""#) && !theirs.contains(job), "\(theirs)")
        }
        #expect(owner.call(#"{"id":2,"op":"status","job":"\#(job)"}"#)?["state"] == "delayed", "bin's cancel took effect")

        // A key of another user's: a new job, as a fresh key gets.
        let used = try #require(other.call(
            #"{"id":"u","op":"submit","action":"echo","args":["x"],"worker":"w2","delay_ms":600000,"wait":false,"unique_key":"nightly"}"#))
        let fresh = try #require(other.call(
            #"{"id":"u","op":"submit","action":"echo","args":["x"],"worker":"w2","delay_ms":600000,"wait":false,"unique_key":"fresh"}"#))
        let usedJob = try #require(used["job"]?.stringValue), freshJob = try #require(fresh["job"]?.stringValue)
        #expect(usedJob != job && used["duplicate"] == nil)
        #expect(masking(usedJob, in: used) == masking(freshJob, in: fresh), "\(used) / \(fresh)")
        // The owner's key still names the owner's job.
        let again = try #require(owner.call(
            #"{"id":3,"op":"submit","action":"echo","args":["secret"],"worker":"w1","wait":false,"unique_key":"nightly"}"#))
        #expect(again["job"]?.stringValue == job && again["duplicate"] == true)

        // jobs: bin's own two, whatever the filters; nobody's one; all three for an administrator.
        for filters in ["", #","worker":"w1""#, #","action":"echo""#, #","state":"delayed""#] {
            let listed = other.call(#"{"id":4,"op":"jobs"\#(filters)}"#)?["jobs"]?.arrayValue?.compactMap { $0["job"]?.stringValue }
            #expect(Set(listed ?? ["?"]).isSubset(of: [usedJob, freshJob]), "jobs\(filters): \(listed ?? [])")
        }
        #expect(owner.call(#"{"id":5,"op":"jobs"}"#)?["jobs"]?.arrayValue?.count == 1)
        #expect(admin.call(#"{"id":6,"op":"jobs"}"#)?["jobs"]?.arrayValue?.count == 3)
        #expect(admin.call(#"{"id":7,"op":"status","job":"\#(job)"}"#)?["state"] == "delayed")
        #expect(admin.call(#"{"id":8,"op":"cancel","job":"\#(job)"}"#)?["cancelled"] == true)
    }

    /// `workers` shows another user's running job as busy, with its action
    /// and start, but not its id; `inspect` shows heap addresses and source
    /// labels (an exec child's pid) to administrators only.
    @Test func workersAndInspectShowAnotherUsersRunningJobWithoutWhatIdentifiesIt() throws {
        let d = try LoopdAsAnotherUser(tables: LoopdAsAnotherUser.twoWorkers + """
            [actions.pause]
            argv = ["/bin/sleep", "600"]
            allow_users = ["*"]
            """)
        defer { d.stop() }
        let owner = try d.client(as: .nobody), other = try d.client(as: .bin), root = try d.client(as: .root)
        let job = try #require(owner.call(#"{"id":1,"op":"submit","action":"pause","worker":"w1","wait":false}"#)?["job"]?.stringValue)
        var mine: JSON?
        #expect(waitUntil {
            mine = w1(owner)
            return mine?["running"]?.stringValue == job
        }, "the owner never saw its job run: \(String(describing: mine))")

        let theirs = try #require(w1(other))
        #expect(theirs["running"] == .null && theirs["busy"] == true)
        #expect(theirs["running_action"] == "pause" && theirs["running_since"] != nil)
        #expect(theirs["running_since"] == mine?["running_since"])
        #expect(w1(root)?["running"]?.stringValue == job)
        let idle = other.call(#"{"id":2,"op":"workers"}"#)?["workers"]?.arrayValue?.first { $0["name"] == "w2" }
        #expect(idle?["busy"] == false && idle?["running_action"] == nil)

        let inspect = #"{"id":3,"op":"inspect","worker":"w1"}"#
        // The child's source joins the loop just after the job is marked running.
        var forRoot = ""
        #expect(waitUntil {
            forRoot = root.call(inspect)?["description"]?.stringValue ?? ""
            return forRoot.contains("pid = ")
        }, "\(forRoot)")
        #expect(forRoot.hasPrefix("<Loop 0x"), "\(forRoot)")
        let forOther = try #require(other.call(inspect)?["description"]?.stringValue)
        let forOwner = try #require(owner.call(inspect)?["description"]?.stringValue)
        for text in [forOther, forOwner] {
            // Observers' activities are written in hex too; nothing else may be.
            let hex = text.replacingOccurrences(of: "activities = 0x", with: "")
            #expect(text.hasPrefix("<Loop> {") && !hex.contains("0x") && !text.contains("pid = "), "\(text)")
        }
        #expect(owner.call(#"{"id":4,"op":"cancel","job":"\#(job)"}"#)?["cancelled"] == true)
    }

    /// A key orders only its own user's jobs: another user's keyed job of
    /// the worst priority does not hold back a user's job of the same key.
    @Test func aKeyOrdersOnlyItsOwnUsersJobs() throws {
        let d = try LoopdAsAnotherUser()
        defer { d.stop() }
        let root = try d.client(as: .root), slow = try d.client(as: .nobody), user = try d.client(as: .bin)
        func state(_ job: String) -> String {
            root.call(#"{"id":"s","op":"status","job":"\#(job)"}"#)?["state"]?.stringValue ?? "?"
        }
        // Both workers busy, so that the jobs below all wait in one lane and
        // the lane picks among them by priority when its blocker ends.
        var blockers: [String: String] = [:]
        for w in ["w1", "w2"] {
            let job = try #require(root.call(
                #"{"id":"b","op":"submit","action":"sleep","args":["600000"],"worker":"\#(w)","wait":false}"#)?["job"]?.stringValue)
            #expect(waitUntil { state(job) == "running" })
            blockers[w] = job
        }
        let worst = try #require(slow.call(
            #"{"id":1,"op":"submit","action":"sleep","args":["600000"],"key":"k","priority":4294967295,"wait":false}"#))
        let worker = try #require(worst["worker"]?.stringValue)
        let worstJob = try #require(worst["job"]?.stringValue)
        let keyed = try #require(user.call(
            #"{"id":2,"op":"submit","action":"sleep","args":["600000"],"key":"k","priority":0,"wait":false}"#))
        #expect(keyed["worker"]?.stringValue == worker, "a key lands on the same worker for everyone")
        let keyedJob = try #require(keyed["job"]?.stringValue)
        let later = try #require(user.call(
            #"{"id":3,"op":"submit","action":"sleep","args":["600000"],"worker":"\#(worker)","priority":100,"wait":false}"#)?["job"]?.stringValue)
        // Its own priority, not the other user's: no run_priority beside it.
        let status = try #require(user.call(#"{"id":4,"op":"status","job":"\#(keyedJob)"}"#))
        #expect(status["priority"] == .integer(0) && status["run_priority"] == nil, "\(status)")

        #expect(root.call(#"{"id":5,"op":"cancel","job":"\#(blockers[worker] ?? "")"}"#)?["cancelled"] == true)
        var states: [String] = []
        #expect(waitUntil {
            states = [keyedJob, later, worstJob].map(state)
            return states.contains("running")
        })
        #expect(states == ["running", "queued", "queued"], "priority 0 runs first, then 100, then the other user's: \(states)")
        for job in [worstJob, keyedJob, later] + blockers.values {
            _ = root.call(#"{"id":"c","op":"cancel","job":"\#(job)"}"#)
        }
    }

    /// An explicit worker takes jobs from the administrators and from the
    /// users and groups its allow lists name; anyone else is refused with
    /// `forbidden`, the worker named, and no job is made.
    @Test func anExplicitWorkerTakesJobsOnlyFromItsAllowLists() throws {
        let d = try LoopdAsAnotherUser(tables: """
            [[workers]]
            name = "w1"
            [[workers]]
            name = "ops"
            placement = "explicit"
            allow_users = [\(Account.nobody.uid)]
            allow_groups = [\(Account.wwwData.gid)]
            """, server: "admin_users = [\(Account.sys.uid)]")
        defer { d.stop() }
        let submit = #"{"id":1,"op":"submit","action":"echo","args":["on ops"],"worker":"ops"}"#
        for account in [Account.nobody, .wwwData, .sys, .root] {
            let reply = try d.client(as: account).call(submit)
            #expect(reply?["result"]?["output"] == "on ops", "\(account): \(String(describing: reply))")
        }
        let refused = try d.client(as: .bin)
        let reply = try #require(refused.call(submit))
        #expect(reply.errorCode == "forbidden" && reply["job"] == nil, "\(reply)")
        #expect(reply["error"]?["message"]?.stringValue?.contains(#"worker "ops""#) == true, "\(reply)")
        #expect(refused.call(#"{"id":2,"op":"jobs"}"#)?["jobs"]?.arrayValue?.isEmpty == true)
        #expect(refused.call(#"{"id":3,"op":"submit","action":"echo","args":["on w1"],"worker":"w1"}"#)?["result"]?["output"] == "on w1")
    }

    /// Ids are 13 opaque base-36 digits, and a restart makes other ones,
    /// also when the environment fixes Swift's hashing seed
    /// (`SWIFT_DETERMINISTIC_HASHING`): the key comes from the kernel.
    @Test func idsAreOpaqueAndNewAfterEveryStartEvenWithDeterministicHashing() throws {
        var firsts: [String] = []
        for _ in 0..<2 {
            let d = try LoopdAsAnotherUser(environment: ["SWIFT_DETERMINISTIC_HASHING": "1"])
            defer { d.stop() }
            let c = try d.client(as: .nobody)
            let ids = (0..<3).compactMap { c.call(#"{"id":\#($0),"op":"submit","action":"noop"}"#)?["job"]?.stringValue }
            #expect(ids.count == 3 && Set(ids).count == 3)
            #expect(ids.allSatisfy { $0.utf8.count == 13 && $0.utf8.allSatisfy { (48...57).contains($0) || (97...122).contains($0) } },
                    "\(ids)")
            firsts += ids.prefix(1)
        }
        #expect(firsts.count == 2 && firsts[0] != firsts[1], "\(firsts)")
    }
}

/// Sends `line` and returns the reply line as it came.
private func rawReply(_ c: TestClient, _ line: String) -> String {
    c.send(line)
    return c.readLine() ?? "(no reply)"
}

/// A reply with the job id `job` replaced, to compare two replies that differ only in it.
private func masking(_ job: String, in reply: JSON) -> String {
    reply.serialized().replacingOccurrences(of: job, with: "JOB")
}

/// The `workers` entry of w1, as `c` sees it.
private func w1(_ c: TestClient) -> JSON? {
    c.call(#"{"id":"w","op":"workers"}"#)?["workers"]?.arrayValue?.first { $0["name"] == "w1" }
}
