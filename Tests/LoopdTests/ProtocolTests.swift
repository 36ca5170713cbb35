import Foundation
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Protocol round trips for every operation and error code.
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
        // w1 runs another mode: the two jobs are held, and stay queued (they
        // count toward the limit) for as long as the test needs.
        #expect(c.call(#"{"id":"m","op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        for i in 0..<2 {
            #expect(c.call(#"{"id":\#(i),"op":"submit","action":"echo","worker":"w1","wait":false}"#)?.ok == true)
        }
        #expect(c.waitForHeld("w1", 2), "the two jobs are not both held")
        let r = try #require(c.call(#"{"id":9,"op":"submit","action":"echo","worker":"w1"}"#))
        #expect(r.errorCode == "queue_full")
        #expect(c.call(#"{"id":10,"op":"submit","action":"echo","worker":"w2"}"#)?.ok == true)
    }

    /// Run as root, the test's own client is always allowed, so the refusal
    /// is proved with a client of another uid: loopctl run as `nobody`
    /// (setpriv). Not as root, there is no second uid to be, and the
    /// daemon's own uid is always allowed too: the test cannot run.
    @Test(.enabled(if: getuid() == 0, "needs root, to run a client as another uid"))
    func forbiddenWhenThePolicyRefusesTheUID() throws {
        let nobody = try #require(getpwnam("nobody")?.pointee.pw_uid, "no user nobody")
        let loopctl = try #require(LoopctlBinary.url(), "no loopctl next to the test bundle")
        let d = RunningDaemon { config in
            config.server.socketMode = 0o666
            var policy = DaemonConfig.Action()
            policy.allowUsers = [424_242]
            config.actions["echo"] = policy
        }
        defer { d.stop() }
        #expect(chmod(d.directory, 0o755) == 0)  // nobody may reach the socket; its mode lets it connect
        func submitAsNobody(_ action: String) throws -> (output: ChildOutput, reply: JSON?) {
            let out = try runAsUser(nobody, loopctl, ["submit", "--socket", d.socketPath, "--json", action])
            return (out, try? JSONParser.parse(Array(out.stdout.utf8.prefix { $0 != 0x0A })))
        }
        // The premise: a client running as nobody is served (an action open
        // to everyone runs), and the refused request is allowed from root.
        let open = try submitAsNobody("noop")
        #expect(open.output.status == 0 && open.reply?.ok == true, "nobody is not served: \(open.output)")
        #expect(try d.client().call(#"{"id":1,"op":"submit","action":"echo"}"#)?.ok == true, "root is always allowed")
        let refused = try submitAsNobody("echo")
        #expect(refused.reply?.errorCode == "forbidden", "\(refused.output)")
        #expect(refused.output.status == 5)  // loopctl: refused by the daemon
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
        #expect(s["retained"]?["jobs"] == .integer(1))
    }

    /// `limits.max_retained_bytes`: large results push the oldest finished
    /// jobs out of `status`; `stats` shows what is kept, within the bound.
    @Test func finishedResultsAreForgottenOldestFirstPastTheByteBound() throws {
        let d = RunningDaemon { $0.limits.maxRetainedBytes = 65_536 }
        defer { d.stop() }
        let c = try d.client()
        let big = String(repeating: "x", count: 8_000)
        var ids: [String] = []
        for k in 0..<20 {
            let r = try #require(c.call(#"{"id":\#(k),"op":"submit","action":"echo","args":["\#(big)"]}"#))
            ids.append(try #require(r["job"]?.stringValue))
        }
        let first = try #require(c.call(#"{"id":"s0","op":"status","job":"\#(ids[0])"}"#))
        #expect(first["error"]?["code"] == "unknown_job")
        let last = try #require(c.call(#"{"id":"s1","op":"status","job":"\#(ids[19])"}"#))
        #expect(last["state"] == "completed" && last["result"]?["output"]?.stringValue == big)
        let s = try #require(c.call(#"{"id":"st","op":"stats"}"#))
        let kept = try #require(s["retained"]?["jobs"]?.integerValue)
        let bytes = try #require(s["retained"]?["bytes"]?.integerValue)
        // Each job holds its 8,000-byte argument and its 8,000-byte output.
        #expect(kept >= 2 && kept < 5, "\(kept) kept")
        #expect(bytes <= 65_536 && bytes >= kept * 16_000)
    }
}
