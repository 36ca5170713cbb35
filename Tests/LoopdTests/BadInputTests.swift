import Foundation
import LoopdProtocol
import Testing
@testable import LoopdCore

/// Bad input gets its error or a clean close; the daemon stays up
/// and every other client's jobs finish.
@Suite(.serialized) struct BadInputTests {
    @Test func hostileClientsNeverDisturbAControlClient() throws {
        let d = RunningDaemon { $0.limits.maxLineBytes = 4096 }
        defer { d.stop() }
        let control = try d.client()
        control.send(#"{"id":"ctl","op":"submit","action":"sleep","args":["300"],"worker":"w1"}"#)

        // Invalid JSON, wrong types, unknown fields, binary garbage: each answered.
        let bad = try d.client()
        for line in ["{", #"{"op":1}"#, #"{"op":"submit","action":"echo","wait":"yes"}"#, #"{"op":"ping","x":null,"y":1}"#] {
            #expect(bad.call(line)?.errorCode == "bad_request")
        }
        bad.send(raw: [0xFF, 0xFE, 0x00, 0x01, 0x0A])
        #expect(bad.readReply()?.errorCode == "bad_request")
        #expect(bad.call(#"{"id":"still","op":"ping"}"#)?["id"] == "still")

        // A line over the limit: answered with too_large, then closed.
        let huge = try d.client()
        huge.send(raw: [UInt8](repeating: 0x41, count: 100_000))
        #expect(huge.readReply()?.errorCode == "too_large")
        #expect(huge.isClosedByPeer())

        // Half a line, then gone.
        do {
            let half = try d.client()
            half.send(raw: Array(#"{"id":1,"op":"sub"#.utf8))
        }
        // A client that submits and vanishes before its reply.
        do {
            let gone = try d.client()
            gone.send(#"{"id":1,"op":"submit","action":"sleep","args":["50"],"worker":"w2"}"#)
        }

        let reply = try #require(control.readReply())
        #expect(reply["id"] == "ctl")
        #expect(reply["state"] == "completed")
        #expect(try d.client().call(#"{"id":1,"op":"ping"}"#)?.ok == true)
    }

    @Test func aClientThatNeverReadsIsThrottledNotBuffered() throws {
        let d = RunningDaemon { $0.limits.maxPendingReplyBytes = 64 * 1024 }
        defer { d.stop() }
        let greedy = try d.client(), watcher = try d.client()
        // Pipelined pings, never reading the replies. The daemon must stop
        // reading this client once its unread replies pass the limit (its
        // stats say so); an unbounded daemon would swallow all 64 MB.
        let line = Array((#"{"id":1234567,"op":"ping"}"# + "\n").utf8)
        var batch: [UInt8] = []
        for _ in 0..<2000 { batch += line }
        let (sent, paused) = greedy.floodWithoutReading(batch, limit: 64 << 20) {
            watcher.call(#"{"id":"p","op":"stats"}"#)?["connections_paused"] == .integer(1)
        }
        #expect(paused)
        #expect(sent < 16 << 20)
        // Meanwhile another client is served promptly.
        #expect(watcher.call(#"{"id":"x","op":"submit","action":"echo","args":["fine"]}"#)?["result"]?["output"] == "fine")
        let stats = try #require(watcher.call(#"{"id":"s","op":"stats"}"#))
        #expect(stats["connections"] == .integer(2) && stats["connections_paused"] == .integer(1))
    }
}
