import Foundation
import LoopdClient
import Testing

@Suite("LoopdClient: replies as other daemons might write them")
struct ReplyFramingTests {
    @Test func aReplyWithoutAnIdAnswersTheOnlyRequestInFlightAndTheConnectionCarriesOn() async throws {
        let daemon = try ScriptedDaemon { request in
            request["op"] == "ping"
                ? [#"{"id":\#(request["id"]!.serialized()),"ok":true,"pid":1,"version":"9.9.9"}"#]
                : [#"{"id":null,"ok":false,"error":{"code":"too_large","message":"line over 65536 bytes"}}"#]
        }
        defer { daemon.stop() }
        let client = try await LoopdClient.connect(socketPath: daemon.socketPath)
        let raw = try await client.send(op: "stats")
        #expect(raw.line == #"{"id":null,"ok":false,"error":{"code":"too_large","message":"line over 65536 bytes"}}"#)
        #expect(await loopdError { _ = try await client.stats() }?.code == .tooLarge)
        #expect(try await client.ping().version == "9.9.9")
        await client.close()
    }

    @Test func aCarriageReturnBeforeTheNewlineAndAnIdWrittenLastAreFine() async throws {
        let daemon = try ScriptedDaemon { request in
            [#"{"ok":true,"pid":1,"version":"9.9.9","id":\#(request["id"]!.serialized())}"# + "\r"]
        }
        defer { daemon.stop() }
        let client = try await LoopdClient.connect(socketPath: daemon.socketPath)
        #expect(try await client.ping().version == "9.9.9")
        let raw = try await client.send(op: "ping")
        #expect(raw.line.hasSuffix(#""id":2}"#))
        await client.close()
    }

    @Test func aLineThatIsNotAnObjectWithABooleanOkIsNotAReply() async throws {
        let daemon = try ScriptedDaemon { request in
            request["op"] == "ping" ? [#"{"id":\#(request["id"]!.serialized()),"ok":"yes"}"#] : ["[1]"]
        }
        defer { daemon.stop() }
        let client = try await LoopdClient.connect(socketPath: daemon.socketPath)
        let noOk = await loopdError { _ = try await client.send(op: "ping") }
        #expect(noOk?.code == .invalidReply)
        #expect(noOk?.message == #"reply has no boolean "ok": {"id":1,"ok":"yes"}"#)
        let array = await loopdError { _ = try await client.send(op: "stats") }
        #expect(array?.code == .invalidReply)
        #expect(array?.message == "reply is not a JSON object: [1]")
        await client.close()
    }

    @Test func aSavedLineIsReadAsTheClientReadsOne() throws {
        let refused = try RawReply(line: #"{"id":null,"ok":false,"error":{"code":"busy","message":"too many connections"}}"#)
        #expect(refused.error?.code == .busy && refused.line.hasPrefix(#"{"id":null,"#))
        #expect(try RawReply(line: #"{"id":3,"ok":true,"pid":1}"#).json["pid"] == 1)
        for line in ["not json", "[1]", #"{"id":1}"#, #"{"id":1,"ok":"yes"}"#] {
            #expect(throws: LoopdError.self) { try RawReply(line: line) }
        }
    }

    @Test func aReplyThatIsNotJSONSaysWhy() async throws {
        let daemon = try ScriptedDaemon { _ in ["this is not json"] }
        defer { daemon.stop() }
        let client = try await LoopdClient.connect(socketPath: daemon.socketPath)
        let error = await loopdError { _ = try await client.send(op: "ping") }
        #expect(error?.code == .invalidReply)
        #expect(error?.message.hasPrefix("reply is not JSON (invalid JSON at byte 0") == true)
        #expect(error?.message.hasSuffix("): this is not json") == true)
        await client.close()
    }
}
