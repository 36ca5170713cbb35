import Foundation
import Glibc
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Privilege: a job belongs to the client that submitted it,
/// and a replay is judged by that client's real credentials.
@Suite(.serialized) struct OwnershipTests {
    /// The journal keeps the owner's gid and groups, and a finished job's
    /// owner; records written before those fields existed still read.
    @Test func journalRecordsCarryTheOwnersCredentials() throws {
        let withGroups = DurableJob(id: "j1", action: "echo", args: ["a"], placement: "any", submittedAt: 7,
                                    clientUID: 1000, clientGID: 4242, clientGroups: [10, 20])
        let finished = FinishedJob(id: "j1", state: "completed", resultJSON: "{}", finishedAt: 9, clientUID: 1000)
        let legacy = DurableJob(id: "j2", action: "echo", args: [], placement: "any", submittedAt: 7, clientUID: 1000)
        let legacyFinished = FinishedJob(id: "j2", state: "failed", resultJSON: "{}", finishedAt: 9)
        let records: [JournalRecord] = [.submitted(withGroups), .finished(finished), .submitted(legacy), .finished(legacyFinished)]
        var bytes = JournalRecord.fileHeader
        for record in records { try record.encode(into: &bytes) }
        let scan = try JournalScan(bytes, path: "mem")
        #expect(scan.records.map(\.record) == records)
        #expect(scan.validEnd == bytes.count)
    }

    /// Bug replay-checks-uid-as-gid: a replayed durable job was checked
    /// against `allow_groups` with the client's uid standing in for its gid,
    /// so a job admitted through its group at submission failed at replay
    /// with `replay_error`. The journal now keeps the gid and groups.
    @Test func replayChecksUIDAsGID_aJobAdmittedByItsGroupRunsAgainAfterARestart() throws {
        let state = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try pending([DurableJob(id: "r-group", action: "echo", args: ["g"], placement: "worker:w1", submittedAt: 1,
                                clientUID: 65534, clientGID: 4242),
                     DurableJob(id: "r-supp", action: "echo", args: ["s"], placement: "worker:w1", submittedAt: 1,
                                clientUID: 65534, clientGID: 65534, clientGroups: [4242])], in: state)
        let d = replayingDaemon(state: state) { $0.allowGroups = [4242] }
        defer { d.stop() }
        let c = try d.client()
        for (job, output) in [("r-group", "g"), ("r-supp", "s")] {
            let status = try #require(waitForFinal(job, client: c))
            #expect(status["state"] == "completed", "\(job): \(status.serialized())")
            #expect(status["result"]?["output"]?.stringValue == output)
        }
    }

    /// The other side of the same rule: a permission revoked while the daemon
    /// was down holds at the replay, and the job ends `failed` with the reason.
    @Test func replayHonoursARevokedPermission() throws {
        let state = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: state) }
        try pending([DurableJob(id: "r-revoked", action: "echo", args: ["x"], placement: "any", submittedAt: 1,
                                clientUID: 65534, clientGID: 65534)], in: state)
        let d = replayingDaemon(state: state) { $0.allowUsers = [1] }
        defer { d.stop() }
        let status = try #require(waitForFinal("r-revoked", client: try d.client()))
        #expect(status["state"] == "failed")
        #expect(status["result"]?["replay_error"]?.stringValue?.contains("may not run action \"echo\"") == true,
                "\(status.serialized())")
    }

    /// Bug status-cancel-any-owner: any client that could reach the socket
    /// could read another user's job result (an exec action's output) and
    /// cancel its jobs. Now only the owner and the administrators may, and
    /// to anyone else the job does not exist: its `status` and `cancel`
    /// are answered as those of an id never given out.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func statusCancelAnyOwner_anotherUsersJobIsUnknownToThem() throws {
        let d = RunningDaemon { $0.server.socketMode = 0o666 }
        defer { d.stop() }
        chmod(d.directory, 0o755)
        let c = try d.client()
        let root = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["secret"],"worker":"w1","delay_ms":60000,"wait":false}"#))
        let rootJob = try #require(root["job"]?.stringValue)
        let missing = "0000000000000"
        let replies = try asNobody(d.socketPath, [
            #"{"id":"s","op":"status","job":"\#(rootJob)"}"#,
            #"{"id":"c","op":"cancel","job":"\#(rootJob)"}"#,
            #"{"id":"s","op":"status","job":"\#(missing)"}"#,
            #"{"id":"c","op":"cancel","job":"\#(missing)"}"#,
            #"{"id":"own","op":"submit","action":"echo","args":["mine"],"worker":"w2","delay_ms":60000,"wait":false}"#,
        ])
        #expect(replies.count == 5)
        #expect(replies.count == 5 && replies[0].contains(#""code":"unknown_job""#), "\(replies)")
        #expect(replies.count == 5 && replies[0] == replies[2] && replies[1] == replies[3], "\(replies)")
        #expect(c.call(#"{"id":2,"op":"status","job":"\#(rootJob)"}"#)?["state"] == "delayed", "nobody's cancel must not have taken effect")
        // Its own job stays its own to manage; root may manage it too.
        let own = try #require(replies.last.flatMap { $0.split(separator: "\"job\":\"").last?.split(separator: "\"").first }.map(String.init))
        let ownReplies = try asNobody(d.socketPath, [#"{"id":"s2","op":"status","job":"\#(own)"}"#,
                                                     #"{"id":"c2","op":"cancel","job":"\#(own)"}"#])
        #expect(ownReplies.count == 2 && ownReplies.allSatisfy { $0.contains(#""ok":true"#) }, "\(ownReplies)")
        #expect(c.call(#"{"id":3,"op":"cancel","job":"\#(rootJob)"}"#)?["cancelled"]?.boolValue == true)
    }
}

/// A daemon starting on the journal in `state`, with `echo` restricted by `policy`.
private func replayingDaemon(state: String, policy: (inout DaemonConfig.Action) -> Void) -> RunningDaemon {
    RunningDaemon { config in
        config.server.stateDirectory = state
        var echo = DaemonConfig.Action()
        policy(&echo)
        config.actions["echo"] = echo
    }
}

/// Writes `jobs` into a fresh journal under `state` as acknowledged and unfinished.
private func pending(_ jobs: [DurableJob], in state: String) throws {
    let journal = try JobJournal(directory: state, fsync: false, retentionSeconds: 3600)
    for job in jobs { journal.appendSubmitted(job) }
    try journal.commit()
}

/// Polls `status` (bounded, 10 s) until the job reaches a final state.
private func waitForFinal(_ job: String, client c: TestClient) -> JSON? {
    for i in 0..<1000 {
        if let r = c.call(#"{"id":"w\#(i)","op":"status","job":"\#(job)"}"#),
           let state = r["state"]?.stringValue, ["completed", "failed", "cancelled"].contains(state) { return r }
        usleep(10_000)
    }
    return nil
}

/// Sends `requests` on one connection as uid/gid 65534 (nobody) and returns
/// one reply line per request.
private func asNobody(_ socket: String, _ requests: [String]) throws -> [String] {
    let client = """
    import socket, sys
    s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
    f = s.makefile('rwb')
    for line in sys.argv[2:]:
        f.write(line.encode() + b'\\n'); f.flush()
        print(f.readline().decode().strip())
    """
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/python3", "-c", client, socket] + requests
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}
