import Foundation
import Glibc
import LoopdCore
import LoopdProtocol
import Testing

/// Durable jobs survive a SIGKILL of the real daemon process.
@Suite(.serialized) struct DurableReplayTests {
    /// A loopd child process on a temp directory.
    final class DaemonProcess {
        let directory: String
        let socketPath: String
        /// A directory exec children may write in: `directory/children`.
        var childDirectory: String { directory + "/children" }
        private var process: Process?

        /// A daemon with its state in `directory`, fsync on, workers w1 and
        /// w2, exec children as `nobody` (with `execConfig`, more keys of
        /// `[exec]`), and `extraConfig` (more TOML tables) after them.
        init(directory: String, execConfig: String = "", extraConfig: String = "") {
            self.directory = directory
            socketPath = directory + "/loopd.sock"
            // Where exec children, who run as nobody, may write (`childDirectory`).
            chmod(directory, 0o711)
            mkdir(directory + "/children", 0o777)
            chmod(directory + "/children", 0o777)
            let config = """
            [server]
            socket = "\(socketPath)"
            state_dir = "\(directory)/state"
            [journal]
            fsync = true
            [exec]
            user = "nobody"
            \(execConfig)
            [[workers]]
            name = "w1"
            [[workers]]
            name = "w2"

            """ + extraConfig
            _ = FileManager.default.createFile(atPath: directory + "/loopd.toml", contents: Data(config.utf8))
        }

        func start() throws {
            let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("loopd")
            let p = Process()
            p.executableURL = exe
            p.arguments = ["--config", directory + "/loopd.toml"]
            p.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try p.run()
            process = p
            // Ready once the socket answers (bounded).
            for _ in 0..<2000 {
                if let c = try? TestClient(path: socketPath), c.call(#"{"id":0,"op":"ping"}"#)?.ok == true { return }
                usleep(5000)
            }
            Issue.record("loopd did not come up")
        }

        /// The running daemon's pid.
        var pid: Int32? { process?.processIdentifier }

        func kill() {
            guard let p = process else { return }
            Glibc.kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            process = nil
        }

        func terminate() {
            guard let p = process else { return }
            Glibc.kill(p.processIdentifier, SIGTERM)
            p.waitUntilExit()
            process = nil
        }
    }

    /// The unfinished jobs journal.log holds, read with the daemon's own
    /// reader from a copy (reading recovers the copy: it may cut a torn tail).
    private func pendingInJournal(stateDirectory: String) throws -> [String] {
        let copy = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: stateDirectory + "/journal.log", toPath: copy + "/journal.log")
        let journal = try JobJournal(directory: copy, fsync: false, retentionSeconds: 86_400)
        return journal.pendingJobs().map(\.id)
    }

    @Test func acknowledgedDurableJobsRunAgainAfterSIGKILL() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = DaemonProcess(directory: dir)
        try d.start()
        var c = try TestClient(path: d.socketPath)

        // Finished before the crash: its status must stay queryable after it.
        let done = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["before"],"durable":true}"#))
        #expect(done["state"] == "completed")
        let doneID = try #require(done["job"]?.stringValue)
        // A held lane: w1 runs another mode, so none of its four durable
        // jobs can start, let alone finish, before the kill. (The mode is
        // not kept across a restart: w1 comes back in its default mode.)
        #expect(c.call(#"{"id":2,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        var pending: [String] = []
        let blocker = try #require(c.call(#"{"id":3,"op":"submit","action":"sleep","args":["50"],"worker":"w1","durable":true,"wait":false}"#))
        pending.append(try #require(blocker["job"]?.stringValue))
        for i in 0..<3 {
            let r = try #require(c.call(#"{"id":\#(10 + i),"op":"submit","action":"echo","args":["after \#(i)"],"worker":"w1","durable":true,"wait":false}"#))
            #expect(r.ok == true)
            pending.append(try #require(r["job"]?.stringValue))
        }
        // The premise: at the kill the four are acknowledged and unfinished.
        #expect(c.waitForHeld("w1", 4), "w1 does not hold its four jobs")
        let stats = try #require(c.call(#"{"id":4,"op":"stats"}"#))
        #expect(stats["journal"]?["pending"] == .integer(4), "\(stats)")
        // Acknowledged means journaled: kill the process without warning.
        d.kill()
        #expect(try pendingInJournal(stateDirectory: dir + "/state") == pending, "the journal left by the kill")

        try d.start()
        c = try TestClient(path: d.socketPath)
        for job in pending {
            #expect(c.waitForState(job, "completed") == "completed", "job \(job)")
        }
        let last = try #require(c.call(#"{"id":5,"op":"status","job":"\#(pending[3])"}"#))
        #expect(last["result"]?["output"] == "after 2")
        let old = try #require(c.call(#"{"id":6,"op":"status","job":"\#(doneID)"}"#))
        #expect(old["state"] == "completed")
        #expect(old["result"]?["output"] == "before")
        d.terminate()
    }
}
