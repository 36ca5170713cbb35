import Foundation
import Glibc
import Testing
import LoopdProtocol
@testable import LoopctlCommands

// loopctl workers and busy workers: a worker that runs a job the client may
// not see (another user's) shows as busy, with the job's action and start.

@Suite("loopctl workers: busy workers")
struct LoopctlWorkersTests {
    @Test("a worker running another user's job: RUNNING busy, its ACTION and SINCE; an idle one: -")
    func anotherUsersJobIsBusy() throws {
        let out = try human(try parse(["workers"]) as WorkersCommand, #"{"id":1,"ok":true,"workers":[{"name":"w1","mode":"default","placement":"auto","queued":1,"held":0,"running":null,"busy":true,"running_action":"sleep","running_since":"2026-11-24T07:01:02.348Z","loop":"waiting","stalled_ms":0,"completed":6},{"name":"w2","mode":"default","placement":"auto","queued":0,"held":0,"running":null,"busy":false,"loop":"waiting","stalled_ms":0,"completed":7}]}"#)
        #expect(out == CommandOutput(standardOutput: """
            NAME  MODE     QUEUED  HELD  RUNNING  ACTION  SINCE                     LOOP     COMPLETED
            w1    default       1     0  busy     sleep   2026-11-24T07:01:02.348Z  waiting          6
            w2    default       0     0  -        -       -                         waiting          7

            """))
    }

    @Test("a reply without busy (an older daemon): the running job's id or -")
    func replyWithoutBusy() throws {
        let out = try human(try parse(["workers"]) as WorkersCommand, #"{"id":1,"ok":true,"workers":[{"name":"w1","mode":"default","queued":0,"held":0,"running":"j1","loop":"busy","stalled_ms":0,"completed":1},{"name":"w2","mode":"default","queued":0,"held":0,"running":null,"loop":"waiting","stalled_ms":0,"completed":0}]}"#)
        #expect(out.standardOutput == """
            NAME  MODE     QUEUED  HELD  RUNNING  ACTION  SINCE  LOOP     COMPLETED
            w1    default       0     0  j1       -       -      busy             1
            w2    default       0     0  -        -       -      waiting          0

            """)
    }

    /// loopd runs in-process as root, so root's job is another user's to
    /// `nobody`, who runs loopctl (setpriv); root, its owner, runs loopctl
    /// in-process.
    @Test("against the daemon: loopctl workers shows another user's job as busy, the owner's with its id; --json as it came",
          .enabled(if: getuid() == 0, "needs root, to run loopctl as another uid"))
    func againstTheDaemon() throws {
        let nobody = try #require(getpwnam("nobody")?.pointee.pw_uid, "no user nobody")
        let loopctl = try #require(LoopctlBinary.url(), "no loopctl next to the test bundle")
        let d = RunningDaemon { $0.server.socketMode = 0o666 }
        defer { d.stop() }
        #expect(chmod(d.directory, 0o755) == 0)  // nobody may reach the socket
        let c = try d.client()
        let job = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["60000"],"worker":"w1","wait":false}"#)?["job"]?.stringValue)
        #expect(c.waitForState(job, "running") == "running")

        let owner = Captured()
        #expect(Loopctl.execute(["workers", "--socket", d.socketPath], in: owner.context()) == .ok)
        let theirs = try runAsUser(nobody, loopctl, ["workers", "--socket", d.socketPath])
        let theirsJSON = try runAsUser(nobody, loopctl, ["workers", "--json", "--socket", d.socketPath])
        #expect(c.call(#"{"id":2,"op":"cancel","job":"\#(job)"}"#)?["cancelled"] == true)

        let ownRow = try #require(row("w1", in: owner.out), "\(owner.out)")
        let busyRow = try #require(row("w1", in: theirs.stdout), "\(theirs)")
        #expect(ownRow[4] == job && ownRow[5] == "sleep" && ownRow[6].hasPrefix("20"), "\(ownRow)")
        #expect(busyRow[4] == "busy" && busyRow[5] == "sleep" && busyRow[6] == ownRow[6], "\(busyRow)")
        #expect(row("w2", in: theirs.stdout)?[4...6] == ["-", "-", "-"], "\(theirs)")
        #expect(!theirs.stdout.contains(job) && theirs.status == 0)

        let reply = try JSONParser.parse(Array(theirsJSON.stdout.utf8.prefix { $0 != 0x0A }))
        let w1 = reply["workers"]?.arrayValue?.first { $0["name"] == "w1" }
        #expect(w1?["running"] == .null && w1?["busy"] == true && w1?["running_action"] == "sleep", "\(theirsJSON)")
        #expect(w1?["running_since"]?.stringValue == ownRow[6])
    }

    /// The cells of the table row whose first cell is `name`.
    private func row(_ name: String, in table: String) -> [String]? {
        table.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.first { $0.first == name }
    }
}
