import Testing
import LoopdProtocol
@testable import LoopdCore

/// What loopd does with memory after work: freed memory goes back to the
/// kernel once it is idle after a burst.
@Suite struct IdleTrimTests {
    /// After a burst of jobs, once no job waits or runs and none has ended
    /// for a quiet second, loopd trims malloc's free memory once (`stats`
    /// counts it in `idle_trims`). A job held on another worker keeps the
    /// queues from draining until its worker's mode is switched back.
    @Test func aBurstIsFollowedByOneTrimOnceTheQueuesAreIdle() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        // One job held on w2 (its mode does not run it) keeps loopd busy.
        _ = c.call(#"{"id":"m","op":"mode","worker":"w2","mode":"maintenance"}"#)
        let held = try #require(c.call(#"{"id":"h","op":"submit","action":"noop","worker":"w2","wait":false}"#)?["job"]?.stringValue)
        let burst = IdleTrim.burstJobs + 200
        var batch: [UInt8] = []
        for k in 0..<burst { batch += Array(#"{"id":\#(k),"op":"submit","action":"noop","worker":"w1"}"#.utf8) + [0x0A] }
        c.send(raw: batch)
        for _ in 0..<burst { _ = c.readReply() }
        func stats() -> JSON? { c.call(#"{"id":"s","op":"stats"}"#) }
        #expect(stats()?["completed"] == .integer(Int64(burst)))
        #expect(stats()?["idle_trims"] == .integer(0))
        // Releasing the held job ends the last outstanding one: now idle.
        _ = c.call(#"{"id":"m2","op":"mode","worker":"w2","mode":"default"}"#)
        #expect(c.waitForState(held, "completed") == "completed")
        #expect(waitUntil { stats()?["idle_trims"] == .integer(1) })
        #expect(stats()?["queued"] == .integer(0) && stats()?["running"] == .integer(0))
    }
}
