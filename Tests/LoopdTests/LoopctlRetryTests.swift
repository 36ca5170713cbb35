import Testing
import LoopdProtocol
@testable import LoopctlCommands

/// loopctl's side of retries and unique keys.
@Suite struct LoopctlRetryTests {
    @Test("loopctl submit --retries --retry-backoff-ms --unique-key send the fields; out-of-range values are usage errors")
    func submitSendsTheFields() throws {
        let submit: SubmitCommand = try parse(["submit", "--retries", "3", "--retry-backoff-ms", "250", "--unique-key", "nightly-7", "fail", "x"])
        let fields = submit.requestFields
        #expect(fields.first { $0.0 == "retries" }?.1 == .integer(3))
        #expect(fields.first { $0.0 == "retry_backoff_ms" }?.1 == .integer(250))
        #expect(fields.first { $0.0 == "unique_key" }?.1 == "nightly-7")
        #expect(throws: (any Error).self) { _ = try parse(["submit", "--retries", "-1", "fail"]) as SubmitCommand }
        #expect(throws: (any Error).self) { _ = try parse(["submit", "--retries", "1001", "fail"]) as SubmitCommand }
        #expect(throws: (any Error).self) { _ = try parse(["submit", "--unique-key", "", "fail"]) as SubmitCommand }
    }

    @Test("loopctl status shows the attempt out of how many, the last error and every failed attempt")
    func statusShowsAttempts() throws {
        let status: StatusCommand = try parse(["status", "j1"])
        let out = try human(status, #"{"id":1,"ok":true,"job":"j1","state":"delayed","worker":"w1","action":"fail","durable":false,"submitted_at":"2026-11-24T07:01:02.345Z","attempt":3,"retries":4,"unique_key":"k","last_error":{"code":"timeout","message":"too slow"},"attempts":[{"attempt":1,"code":"job_failed","message":"no","finished_at":"2026-11-24T07:01:02.400Z"},{"attempt":2,"code":"timeout","message":"too slow","finished_at":"2026-11-24T07:01:03.400Z"}]}"#)
        #expect(out.standardOutput.contains("attempt     3 of 5\n"), "\(out.standardOutput)")
        #expect(out.standardOutput.contains("last error  timeout: too slow\n"), "\(out.standardOutput)")
        #expect(out.standardOutput.contains("attempts    #1 job_failed: no; #2 timeout: too slow\n"), "\(out.standardOutput)")
        #expect(out.standardOutput.contains("unique key  k\n"), "\(out.standardOutput)")
        #expect(!out.standardOutput.contains("retries"))
    }
}
