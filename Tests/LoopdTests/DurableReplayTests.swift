import Foundation
import Glibc
import LoopdProtocol
import Testing

/// Issue 3 item 6: durable jobs survive a SIGKILL of the real daemon process.
@Suite(.serialized) struct DurableReplayTests {
    /// A loopd child process on a temp directory.
    final class DaemonProcess {
        let directory: String
        let socketPath: String
        private var process: Process?

        init(directory: String) {
            self.directory = directory
            socketPath = directory + "/loopd.sock"
            let config = """
            [server]
            socket = "\(socketPath)"
            state_dir = "\(directory)/state"
            [journal]
            fsync = true
            [[workers]]
            name = "w1"
            [[workers]]
            name = "w2"
            """
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

    private func waitForState(_ c: TestClient, _ job: String, _ wanted: String) -> String {
        var state = ""
        for _ in 0..<3000 {
            state = c.call(#"{"id":"s","op":"status","job":"\#(job)"}"#)?["state"]?.stringValue ?? "?"
            if state == wanted { break }
            usleep(5000)
        }
        return state
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
        // A busy lane: one long durable job running, three queued behind it.
        var pending: [String] = []
        let blocker = try #require(c.call(#"{"id":2,"op":"submit","action":"sleep","args":["400"],"worker":"w1","durable":true,"wait":false}"#))
        pending.append(try #require(blocker["job"]?.stringValue))
        for i in 0..<3 {
            let r = try #require(c.call(#"{"id":\#(10 + i),"op":"submit","action":"echo","args":["after \#(i)"],"worker":"w1","durable":true,"wait":false}"#))
            #expect(r.ok == true)
            pending.append(try #require(r["job"]?.stringValue))
        }
        // Acknowledged means journaled: kill the process without warning.
        d.kill()

        try d.start()
        c = try TestClient(path: d.socketPath)
        for job in pending {
            #expect(waitForState(c, job, "completed") == "completed", "job \(job)")
        }
        let last = try #require(c.call(#"{"id":3,"op":"status","job":"\#(pending[3])"}"#))
        #expect(last["result"]?["output"] == "after 2")
        let old = try #require(c.call(#"{"id":4,"op":"status","job":"\#(doneID)"}"#))
        #expect(old["state"] == "completed")
        #expect(old["result"]?["output"] == "before")
        d.terminate()
    }
}
