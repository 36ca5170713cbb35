import Foundation
import Glibc
import LoopdCore
import LoopdProtocol
import Testing

/// Retries and unique keys of durable jobs across a SIGKILL of the real
/// daemon process: the attempt count is journaled, so a restart neither
/// resets it nor runs again an attempt whose end was journaled; the
/// unique-key index is rebuilt from the journal.
@Suite(.serialized) struct DurableRetryTests {
    /// A daemon process whose `attempt` action appends a line to `children/runs`
    /// each time it starts, fails its first run, and sleeps in every later
    /// one (long enough to be killed while it runs).
    private func daemon(_ dir: String) -> DurableReplayTests.DaemonProcess {
        let script = #"echo run >> "$0"; [ "$(wc -l < "$0")" -ge 2 ] && exec sleep 600; exit 3"#
        return DurableReplayTests.DaemonProcess(directory: dir, extraConfig: """
            [actions.attempt]
            argv = ["/bin/sh", "-c", \(quoted(script)), "\(dir)/children/runs"]
            timeout_ms = 600000
            kill_grace_ms = 100
            """)
    }

    private func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private func runs(_ dir: String) -> Int {
        ((try? String(contentsOfFile: dir + "/children/runs", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    @Test("retries: a durable job killed in its second attempt resumes at attempt 2 after SIGKILL, with attempt 1's error")
    func attemptsSurviveSIGKILL() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = daemon(dir)
        try d.start()
        var c = try TestClient(path: d.socketPath)
        let ack = try #require(c.call(#"{"id":1,"op":"submit","action":"attempt","durable":true,"wait":false,"retries":3,"retry_backoff_ms":1,"unique_key":"nightly"}"#))
        let job = try #require(ack["job"]?.stringValue)
        // Attempt 1 failed (its end journaled before attempt 2 starts); attempt 2 runs.
        #expect(waitUntil { c.call(#"{"id":2,"op":"status","job":"\#(job)"}"#)?["state"] == "running" && runs(dir) == 2 })
        let before = try #require(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#))
        #expect(before["attempt"] == .integer(2))
        d.kill()

        try d.start()
        defer { d.terminate() }
        c = try TestClient(path: d.socketPath)
        // Replayed at attempt 2, never attempt 1 again: one more run, and it sleeps.
        #expect(waitUntil { runs(dir) == 3 })
        let after = try #require(c.call(#"{"id":4,"op":"status","job":"\#(job)"}"#))
        #expect(after["attempt"] == .integer(2))
        #expect(after["last_error"]?["message"] == "/bin/sh exited with status 3")
        #expect(after["attempts"]?.arrayValue?.count == 1)
        // Its key came back with it.
        let duplicate = try #require(c.call(#"{"id":5,"op":"submit","action":"attempt","durable":true,"wait":false,"unique_key":"nightly"}"#))
        #expect(duplicate["job"] == .string(job))
        #expect(duplicate["duplicate"] == true)
        _ = c.call(#"{"id":6,"op":"cancel","job":"\#(job)"}"#)
    }

    @Test("retries: a durable job that used every attempt ends failed and is not run again after SIGKILL; its key still answers")
    func finishedAttemptsAreNotRunAgain() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = daemon(dir)
        try d.start()
        var c = try TestClient(path: d.socketPath)
        let end = try #require(c.call(#"{"id":1,"op":"submit","action":"fail","args":["no"],"durable":true,"retries":2,"retry_backoff_ms":1,"unique_key":"once"}"#))
        let job = try #require(end["job"]?.stringValue)
        #expect(end["state"] == "failed")
        #expect(end["attempt"] == .integer(3))
        let delayed = try #require(c.call(#"{"id":2,"op":"submit","action":"echo","args":["later"],"durable":true,"wait":false,"delay_ms":600000,"unique_key":"later"}"#))
        d.kill()

        try d.start()
        defer { d.terminate() }
        c = try TestClient(path: d.socketPath)
        let status = try #require(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#))
        #expect(status["state"] == "failed")
        #expect(status["attempt"] == .integer(3))
        #expect(status["attempts"]?.arrayValue?.count == 3)
        #expect(status["unique_key"] == "once")
        let again = try #require(c.call(#"{"id":4,"op":"submit","action":"fail","durable":true,"unique_key":"once"}"#))
        #expect(again["job"] == .string(job))
        #expect(again["duplicate"] == true)
        #expect(again["error"]?["code"] == "job_failed")
        let pending = try #require(c.call(#"{"id":5,"op":"submit","action":"echo","durable":true,"wait":false,"unique_key":"later"}"#))
        #expect(pending["job"] == delayed["job"])
        #expect(pending["state"] == "delayed")
        #expect(pending["duplicate"] == true)
    }
}
