import Foundation
import Glibc
import LoopdCore
import LoopdProtocol
import Testing

/// `retry` and `discard` of ended jobs: one and in bulk, linked both ways,
/// refused for jobs that have not ended, and durable across SIGKILL
/// (docs/PROTOCOL.md, "retry", "discard").
@Suite(.serialized) struct RerunTests {
    private static func failedJob(_ c: TestClient, durable: Bool = false) throws -> String {
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"fail","args":["broken"],"durable":\#(durable)}"#))
        let job = try #require(r["job"]?.stringValue, "\(r)")
        #expect(r["state"] == "failed")
        return job
    }

    @Test("retry: a failed job runs again as a new job; retry_of and retried_as link them; it is the sender's submit")
    func retryOneJob() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let old = try Self.failedJob(c)
        let r = try #require(c.call(#"{"id":2,"op":"retry","job":"\#(old)"}"#))
        let new = try #require(r["job"]?.stringValue, "\(r)")
        #expect(r["retry_of"]?.stringValue == old && new != old)
        #expect(c.waitForState(new, "failed") == "failed", "the retry did not run its action again")
        #expect(c.call(#"{"id":3,"op":"status","job":"\#(old)"}"#)?["retried_as"]?.stringValue == new)
        let status = try #require(c.call(#"{"id":4,"op":"status","job":"\#(new)"}"#))
        #expect(status["retry_of"]?.stringValue == old && status["action"] == "fail")
        #expect(status["result"] != nil)
    }

    @Test("retry refuses a job that has not ended (bad_request) and one it does not know (unknown_job); filters and job together are bad_request")
    func retryRefusals() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let running = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["60000"],"wait":false}"#)?["job"]?.stringValue)
        #expect(c.call(#"{"id":2,"op":"retry","job":"\#(running)"}"#)?["error"]?["code"] == "bad_request")
        #expect(c.call(#"{"id":3,"op":"retry","job":"0000000000000"}"#)?["error"]?["code"] == "unknown_job")
        #expect(c.call(#"{"id":4,"op":"retry","job":"x","state":"failed"}"#)?["error"]?["code"] == "bad_request")
        #expect(c.call(#"{"id":5,"op":"discard","state":"running"}"#)?["error"]?["code"] == "bad_request")
        #expect(c.call(#"{"id":6,"op":"cancel","job":"\#(running)"}"#)?["cancelled"] == true)
    }

    @Test("bulk: retry takes the failures (by default) matching the filters, up to the limit; discard forgets them")
    func bulkRetryAndDiscard() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let failed = try (0..<3).map { _ in try Self.failedJob(c) }
        let completed = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["ok"]}"#)?["job"]?.stringValue)
        let r = try #require(c.call(#"{"id":2,"op":"retry","action":"fail","limit":2}"#))
        let firstTwo = try #require(r["retried"]?.arrayValue, "\(r)")
        #expect(firstTwo.compactMap { $0["job"]?.stringValue } == Array(failed.prefix(2)))
        #expect(r["more"] == true && r["refused"]?.arrayValue?.isEmpty == true)
        let rest = try #require(c.call(#"{"id":7,"op":"retry","action":"fail","limit":2}"#))
        #expect(rest["retried"]?.arrayValue?.first?["job"]?.stringValue == failed[2],
                "repeating a bulk retry did not go on where the last one stopped: \(rest)")

        let gone = try #require(c.call(#"{"id":3,"op":"discard","state":["failed","completed"],"limit":1000}"#))
        let discarded = gone["discarded"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(discarded.contains(completed) && failed.allSatisfy(discarded.contains), "\(gone)")
        for job in failed + [completed] {
            #expect(c.call(#"{"id":4,"op":"status","job":"\#(job)"}"#)?["error"]?["code"] == "unknown_job")
        }
        let one = try Self.failedJob(c)
        #expect(c.call(#"{"id":5,"op":"discard","job":"\#(one)"}"#)?["discarded"] == true)
        #expect(c.call(#"{"id":6,"op":"status","job":"\#(one)"}"#)?["error"]?["code"] == "unknown_job")
    }

    @Test("durable: a failure is retried after a SIGKILL from its journal record, the links survive another, and a discard does")
    func durableAcrossSIGKILL() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = DurableReplayTests.DaemonProcess(directory: dir)
        try d.start()
        var c = try TestClient(path: d.socketPath)
        let old = try Self.failedJob(c, durable: true)
        let other = try Self.failedJob(c, durable: true)
        d.kill()
        try d.start()
        c = try TestClient(path: d.socketPath)
        let r = try #require(c.call(#"{"id":2,"op":"retry","job":"\#(old)"}"#))
        let new = try #require(r["job"]?.stringValue, "a failure's request was not kept across the restart: \(r)")
        #expect(c.waitForState(new, "failed") == "failed")
        #expect(c.call(#"{"id":3,"op":"discard","job":"\#(other)"}"#)?["discarded"] == true)
        d.kill()
        try d.start()
        defer { d.terminate() }
        c = try TestClient(path: d.socketPath)
        #expect(c.call(#"{"id":4,"op":"status","job":"\#(old)"}"#)?["retried_as"]?.stringValue == new)
        #expect(c.call(#"{"id":5,"op":"status","job":"\#(new)"}"#)?["retry_of"]?.stringValue == old)
        #expect(c.call(#"{"id":6,"op":"status","job":"\#(other)"}"#)?["error"]?["code"] == "unknown_job")
    }

    @Test("owners and administrators: another user cannot retry or discard a job (unknown_job); an administrator may")
    func ownersAndAdministrators() throws {
        guard LoopdAsAnotherUser.isAvailable else { return }
        let d = try LoopdAsAnotherUser(server: "admin_users = [\(Account.sys.uid)]")
        defer { d.stop() }
        let owner = try d.client(as: .nobody), other = try d.client(as: .bin), admin = try d.client(as: .sys)
        let job = try Self.failedJob(owner)
        #expect(other.call(#"{"id":1,"op":"retry","job":"\#(job)"}"#)?["error"]?["code"] == "unknown_job")
        #expect(other.call(#"{"id":2,"op":"discard","job":"\#(job)"}"#)?["error"]?["code"] == "unknown_job")
        #expect(other.call(#"{"id":3,"op":"retry","state":"failed"}"#)?["retried"]?.arrayValue?.isEmpty == true)
        let r = try #require(admin.call(#"{"id":4,"op":"retry","job":"\#(job)"}"#))
        #expect(r["retry_of"]?.stringValue == job, "\(r)")
        #expect(owner.call(#"{"id":5,"op":"discard","job":"\#(job)"}"#)?["discarded"] == true)
    }
}
