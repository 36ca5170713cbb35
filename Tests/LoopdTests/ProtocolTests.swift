import Foundation
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Issue 3: protocol round trips for every operation and error code.
@Suite(.serialized) struct ProtocolTests {
    @Test func pingAnswersWithPidAndVersion() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"ping"}"#))
        #expect(r["id"] == .integer(1))
        #expect(r.ok == true)
        #expect(r["pid"]?.integerValue == Int64(getpid()))
    }

    @Test func submitEchoWaitsForTheResult() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":"a","op":"submit","action":"echo","args":["hello","world"],"worker":"w1"}"#))
        #expect(r.ok == true)
        #expect(r["state"] == "completed")
        #expect(r["worker"] == "w1")
        #expect(r["result"]?["output"] == "hello world")
    }

    @Test func submitWithoutWaitRepliesAtOnceAndStatusFollows() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"sleep","args":["50"],"wait":false}"#))
        #expect(r.ok == true)
        let job = try #require(r["job"]?.stringValue)
        #expect(["queued", "running"].contains(r["state"]?.stringValue))
        var state = ""
        for _ in 0..<2000 {
            let s = try #require(c.call(#"{"id":2,"op":"status","job":"\#(job)"}"#))
            state = s["state"]?.stringValue ?? ""
            if state == "completed" {
                #expect(s["result"]?["slept_ms"] == .integer(50))
                #expect(s["action"] == "sleep")
                break
            }
            usleep(5000)
        }
        #expect(state == "completed")
    }

    @Test func failedJobCarriesJobFailed() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"fail","args":["boom"]}"#))
        #expect(r.ok == false)
        #expect(r.errorCode == "job_failed")
        #expect(r["state"] == "failed")
        #expect(r["error"]?["message"] == "boom")
    }

    @Test(arguments: [
        (#"{"id":1,"op":"nope"}"#, "unknown_op"),
        (#"{"id":1,"op":"submit","action":"nope"}"#, "unknown_action"),
        (#"{"id":1,"op":"submit","action":"echo","worker":"w9"}"#, "unknown_worker"),
        (#"{"id":1,"op":"status","job":"x-1"}"#, "unknown_job"),
        (#"{"id":1,"op":"cancel","job":"x-1"}"#, "unknown_job"),
        (#"{"id":1,"op":"inspect","worker":"w9"}"#, "unknown_worker"),
        (#"{"id":1,"op":"mode","worker":"w9","mode":"m"}"#, "unknown_worker"),
        (#"{"id":1,"op":"submit","action":"echo","extra":1}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"echo","args":"hi"}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"echo","args":[1]}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"echo","delay_ms":-1}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"echo","timeout_ms":0}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"echo","worker":"w1","key":"k"}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"sleep","args":["x"]}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"noop","args":["x"]}"#, "bad_request"),
        (#"{"id":1,"op":"submit","action":"stall","args":["1"]}"#, "unknown_action"),
        (#"[1,2,3]"#, "bad_request"),
        (#"{"id":1,"op":"ping""#, "bad_request"),
        (#"{"id":{"x":1},"op":"ping"}"#, "bad_request"),
    ])
    func errorCodes(_ line: String, _ code: String) throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(line))
        #expect(r.ok == false)
        #expect(r.errorCode == code)
        // The connection stays usable after a bad request.
        #expect(c.call(#"{"id":2,"op":"ping"}"#)?.ok == true)
    }

    @Test func queueFullWhenTheWorkerIsAtItsLimit() throws {
        let d = RunningDaemon { $0.limits.maxQueuedJobsPerWorker = 2 }
        defer { d.stop() }
        let c = try d.client()
        for i in 0..<2 {
            #expect(c.call(#"{"id":\#(i),"op":"submit","action":"sleep","args":["300"],"worker":"w1","wait":false}"#)?.ok == true)
        }
        let r = try #require(c.call(#"{"id":9,"op":"submit","action":"echo","worker":"w1"}"#))
        #expect(r.errorCode == "queue_full")
        #expect(c.call(#"{"id":10,"op":"submit","action":"echo","worker":"w2"}"#)?.ok == true)
    }

    @Test func forbiddenWhenThePolicyRefusesTheUID() throws {
        let d = RunningDaemon { config in
            var policy = DaemonConfig.Action()
            policy.allowUsers = [424_242]
            config.actions["echo"] = policy
        }
        defer { d.stop() }
        let c = try d.client()
        let r = try #require(c.call(#"{"id":1,"op":"submit","action":"echo"}"#))
        if getuid() == 0 {
            // root is always allowed; nothing to refuse.
            #expect(r.ok == true)
        } else {
            #expect(r.errorCode == "forbidden")
        }
    }

    @Test func lineOverTheLimitIsTooLargeAndCloses() throws {
        let d = RunningDaemon { $0.limits.maxLineBytes = 1024 }
        defer { d.stop() }
        let c = try d.client()
        c.send(String(repeating: "x", count: 5000))
        let r = try #require(c.readReply())
        #expect(r.errorCode == "too_large")
        #expect(c.isClosedByPeer())
        // Other clients are unaffected.
        #expect(try d.client().call(#"{"id":1,"op":"ping"}"#)?.ok == true)
    }

    @Test func workersInspectModeAndStats() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        _ = c.call(#"{"id":0,"op":"submit","action":"echo","worker":"w2"}"#)
        let w = try #require(c.call(#"{"id":1,"op":"workers"}"#))
        let list = try #require(w["workers"]?.arrayValue)
        #expect(list.map { $0["name"]?.stringValue } == ["w1", "w2"])
        #expect(list[0]["mode"] == "default")
        #expect(list[1]["completed"] == .integer(1))
        let i = try #require(c.call(#"{"id":2,"op":"inspect","worker":"w1"}"#))
        #expect(i["description"]?.stringValue?.contains("common modes") == true)
        let m = try #require(c.call(#"{"id":3,"op":"mode","worker":"w1","mode":"maintenance"}"#))
        #expect(m["previous"] == "default")
        #expect(m["mode"] == "maintenance")
        let s = try #require(c.call(#"{"id":4,"op":"stats"}"#))
        #expect(s["accepted"] == .integer(1))
        #expect(s["completed"] == .integer(1))
        #expect(s["latency_us"]?["count"] == .integer(1))
    }
}
