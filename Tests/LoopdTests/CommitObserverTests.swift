import LoopRuntime
import Testing
@testable import LoopdCore

/// The group-commit observer is on the main loop only while the journal has
/// records to commit: with it there, every pass of the loop polls its
/// descriptors once more (R17 step 5), which jobs without `durable` never need.
@Suite("The commit observer is armed only while there is something to commit")
struct CommitObserverTests {
    @Test("jobs without durable leave the main loop without a waiting observer")
    func plainJobsNeverArmIt() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        for k in 0..<10 {
            #expect(c.call(#"{"id":\#(k),"op":"submit","action":"noop"}"#)?.ok == true)
        }
        #expect(d.daemon.onMainThread { server in server.scheduler.journalStore!.isArmed } == false)
        #expect(d.daemon.onMainThread { server in server.loop.contains(server.scheduler.journalStore!.observer!, inMode: .default) } == false)
    }

    @Test("a durable job is committed (acknowledged, then its end journaled) and the observer leaves again")
    func durableJobsArmItUntilCommitted() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let ack = try #require(c.call(#"{"id":1,"op":"submit","action":"echo","args":["x"],"durable":true,"wait":false}"#))
        #expect(ack.ok == true)
        let job = try #require(ack["job"]?.stringValue)
        // Its end is journaled too: `status` answers from the journal once it is committed.
        let waited = try #require(c.call(#"{"id":2,"op":"submit","action":"echo","args":["y"],"durable":true}"#))
        #expect(waited.ok == true)
        #expect(c.call(#"{"id":3,"op":"status","job":"\#(job)"}"#)?.ok == true)
        // The first job's end may still be on its way (it was not waited
        // for): at every point between passes the observer is on the loop
        // exactly while records wait, and a later pass commits them.
        var uncommitted = true
        for _ in 0..<1000 where uncommitted {
            let (armed, waiting) = d.daemon.onMainThread { server in
                (server.scheduler.journalStore!.isArmed, server.scheduler.journal?.hasUncommitted ?? false)
            }
            #expect(armed == waiting)
            uncommitted = waiting
        }
        #expect(!uncommitted)
        #expect(d.daemon.onMainThread { server in server.loop.contains(server.scheduler.journalStore!.observer!, inMode: .default) } == false)
    }
}
