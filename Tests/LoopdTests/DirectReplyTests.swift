import Foundation
import Glibc
import LoopdProtocol
import LoopRuntime
import Testing
@testable import LoopdCore

/// Direct replies: a worker writes the reply of a waited job to its client
/// itself (`ReplySink`), before the main thread has recorded the job's end.
/// What a client relies on must not change: what it asks after a reply sees
/// that reply's job finished, a client that half-closes still gets every
/// reply, a closed connection's replies never reach another client, and a
/// client that never reads is throttled.
@Suite(.serialized) struct DirectReplyTests {
    /// The reply reaches the client while the main thread is held just
    /// before it waits, so it came from the worker (told to write at once
    /// even then: by default a worker writes only while the main loop
    /// sleeps, and the race is the same). The `status` sent right after it
    /// then comes out of the same wait as the wake-up for the block that
    /// records the end, and a loop handles descriptors before blocks: the
    /// status must still see the job completed.
    @Test func aWaitedReplyComesFromTheWorkerAndAStatusAfterItSeesTheEnd() throws {
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") })
        defer { d.stop() }
        for q in try #require(d.daemon.server).scheduler.queues { q.lane.writesRepliesAlways.store(true, ordering: .relaxed) }
        let c = try d.client()
        c.send(#"{"id":"job","op":"submit","action":"gate","worker":"w1"}"#)
        #expect(gate.started.wait(timeout: .now() + 20) == .success)

        let mainHeld = DispatchSemaphore(value: 0), releaseMain = DispatchSemaphore(value: 0)
        let loop = try #require(d.daemon.loop)
        let hold = LoopObserver(activities: .beforeWaiting, repeats: false) { _, _ in
            mainHeld.signal()
            _ = releaseMain.wait(timeout: .now() + 30)
        }
        loop.add(hold, forMode: .common)
        loop.wakeUp()
        #expect(mainHeld.wait(timeout: .now() + 20) == .success)
        gate.open.signal()
        let reply = try #require(c.readReply())
        #expect(reply["id"] == "job")
        #expect(reply["state"] == "completed")
        let job = try #require(reply["job"]?.stringValue)
        c.send(#"{"id":"status","op":"status","job":"\#(job)"}"#)
        c.send(#"{"id":"stats","op":"stats"}"#)
        // The premise: both requests wait in the daemon's socket when its
        // main thread resumes. A Unix stream send queues its bytes on the
        // receiving socket before it returns, and until they are read the
        // kernel counts them against the sender (SIOCOUTQ); the only reader
        // is the held main thread.
        #expect(bytesUnreadByPeer(c.fd) > 0, "the requests are not waiting unread in the daemon's socket")
        releaseMain.signal()
        #expect(c.readReply()?["state"] == "completed")
        let stats = try #require(c.readReply())
        #expect(stats["completed"] == .integer(1))
        #expect(stats["replies"]?["by_worker"] == .integer(1) && stats["replies"]?["by_main"] == .integer(0))
    }

    /// A job that ends while the main loop is busy: the worker leaves the
    /// encoded reply to the main thread, which writes it once it resumes.
    @Test func aReplyEndedWhileTheMainLoopIsBusyIsWrittenByTheMainLoop() throws {
        let gate = GateAction()
        let d = RunningDaemon(register: { $0.register(action: gate, named: "gate") })
        defer { d.stop() }
        let c = try d.client()
        c.send(#"{"id":"job","op":"submit","action":"gate","worker":"w2"}"#)
        #expect(gate.started.wait(timeout: .now() + 20) == .success)
        let mainHeld = DispatchSemaphore(value: 0), releaseMain = DispatchSemaphore(value: 0)
        let loop = try #require(d.daemon.loop)
        loop.add(LoopObserver(activities: .beforeWaiting, repeats: false) { _, _ in
            mainHeld.signal()
            _ = releaseMain.wait(timeout: .now() + 30)
        }, forMode: .common)
        loop.wakeUp()
        #expect(mainHeld.wait(timeout: .now() + 20) == .success)
        gate.open.signal()
        // The worker ends the job while the main loop is held, and leaves
        // the encoded reply in the connection's sink: nothing reaches the
        // client until the main loop resumes. (The main thread is parked in
        // the observer, after `mainHeld`: reading its connection table here
        // races with nothing.)
        let sink = try #require(d.daemon.server?.connections.values.first?.sink)
        var left = 0
        for _ in 0..<4000 where left == 0 {
            left = sink.unsentBytes
            if left == 0 { usleep(5000) }
        }
        #expect(left > 0, "the worker did not leave the encoded reply to the main loop")
        var readable: Int32 = 0
        #expect(ioctl(c.fd, UInt(FIONREAD), &readable) == 0 && readable == 0, "a reply reached the client while the main loop was held")
        releaseMain.signal()
        let reply = try #require(c.readReply())
        #expect(reply["id"] == "job")
        #expect(reply["state"] == "completed")
        let job = try #require(reply["job"]?.stringValue)
        #expect(c.call(#"{"id":"status","op":"status","job":"\#(job)"}"#)?["state"] == "completed")
        let stats = try #require(c.call(#"{"id":"stats","op":"stats"}"#))
        #expect(stats["replies"]?["by_main"] == .integer(1) && stats["replies"]?["by_worker"] == .integer(0))
    }

    @Test func aRequestSentAfterAWaitedReplySeesTheJobFinished() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let rounds = 400
        var stale = 0
        for i in 0..<rounds {
            let reply = try #require(c.call(#"{"id":\#(i),"op":"submit","action":"noop","worker":"w1"}"#))
            #expect(reply["state"] == "completed")
            let job = try #require(reply["job"]?.stringValue)
            // Sent the moment the reply is read: the main thread may not have
            // run the block that records the end yet.
            if c.call(#"{"id":"s\#(i)","op":"status","job":"\#(job)"}"#)?["state"] != "completed" { stale += 1 }
        }
        #expect(stale == 0, "\(stale) of \(rounds) status replies did not show the job the client had been told was completed")
        let stats = try #require(c.call(#"{"id":"stats","op":"stats"}"#))
        #expect(stats["completed"] == .integer(Int64(rounds)))
        #expect(stats["queued"] == .integer(0))
    }

    @Test func aClientThatHalfClosesGetsEveryWaitedReplyThenTheClose() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        c.send(#"{"id":1,"op":"submit","action":"sleep","args":["100"],"worker":"w1"}"#)
        c.send(#"{"id":2,"op":"submit","action":"echo","args":["x"],"worker":"w2"}"#)
        c.send(#"{"id":3,"op":"submit","action":"fail","worker":"w2"}"#)
        shutdown(c.fd, Int32(SHUT_WR))
        var ids: [JSON] = []
        while let reply = c.readReply() { ids.append(reply["id"] ?? .null) }
        #expect(ids.count == 3)
        for id in 1...3 { #expect(ids.contains(.integer(Int64(id))), "no reply to request \(id)") }
        #expect(c.isClosedByPeer())
    }

    @Test func aClosedConnectionsRepliesNeverReachTheClientGivenItsDescriptor() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        // Jobs whose replies are owed to connections that close before the
        // jobs end; the descriptors are then reused by new connections.
        // A peer that closes with a reply unread makes the daemon's next
        // read fail (ECONNRESET), and the daemon closes the descriptor at
        // once, with the job's reply still owed.
        for i in 0..<8 {
            let gone = try d.client()
            gone.send(#"{"id":"gone-\#(i)","op":"submit","action":"sleep","args":["100"],"worker":"w\#(i % 2 + 1)"}"#)
            gone.send(#"{"id":"p","op":"ping"}"#)
            var ready = pollfd(fd: gone.fd, events: Int16(POLLIN), revents: 0)
            #expect(poll(&ready, 1, 20_000) == 1)  // the ping's reply is there, unread
        }
        let successors = try (0..<8).map { _ in try d.client() }
        for (i, s) in successors.enumerated() {
            #expect(s.call(#"{"id":"mine-\#(i)","op":"submit","action":"sleep","args":["50"],"worker":"w\#(i % 2 + 1)"}"#)?["id"]
                == .string("mine-\(i)"))
        }
        // Every sleep has ended: anything misdelivered would be there now.
        for (i, s) in successors.enumerated() {
            #expect(s.call(#"{"id":"after-\#(i)","op":"ping"}"#)?["id"] == .string("after-\(i)"))
        }
    }

    @Test func aClientThatNeverReadsItsWaitedRepliesIsThrottled() throws {
        // A queue limit beyond what the client sends: only the reply
        // backlog can stop the daemon reading.
        let d = RunningDaemon {
            $0.limits.maxPendingReplyBytes = 64 * 1024
            $0.limits.maxQueuedJobsPerWorker = 1_000_000
        }
        defer { d.stop() }
        let greedy = try d.client(), other = try d.client()
        let line = Array((#"{"id":1234567,"op":"submit","action":"echo","args":["0123456789abcdef"],"worker":"w1"}"# + "\n").utf8)
        var batch: [UInt8] = []
        for _ in 0..<500 { batch += line }
        let (sent, paused) = greedy.floodWithoutReading(batch, limit: 48 << 20) {
            other.call(#"{"id":"p","op":"stats"}"#)?["connections_paused"] == .integer(1)
        }
        #expect(paused, "the daemon kept reading \(sent) bytes of requests whose replies were never read")
        #expect(sent < 16 << 20)
        #expect(other.call(#"{"id":"x","op":"submit","action":"echo","args":["fine"],"worker":"w2"}"#)?["result"]?["output"] == "fine")
    }
}

/// An action that tells the test it started, then holds its worker until
/// the test opens the gate.
final class GateAction: JobAction, @unchecked Sendable {
    let started = DispatchSemaphore(value: 0)
    let open = DispatchSemaphore(value: 0)

    func start(_ context: ActionContext) {
        started.signal()
        _ = open.wait(timeout: .now() + 30)
        context.complete(.success(.object([])))
    }
}
