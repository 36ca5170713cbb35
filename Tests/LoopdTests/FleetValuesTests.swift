import Testing
@testable import LoopdCore

/// The values the fleet writes and reads: job ids and PostgreSQL array literals.
@Suite("Fleet values")
struct FleetValuesTests {
    @Test("fleet job ids: f-ID, and f-ID.ATTEMPT for the local job running an attempt; nothing else parses")
    func jobIDs() {
        #expect(FleetJobID.text(42) == "f-42")
        #expect(FleetJobID.local(42, attempt: 3) == "f-42.3")
        #expect(FleetJobID.parse("f-42") == 42)
        #expect(FleetJobID.parse("f-42.3") == 42)
        for local in ["02nyi1kbxlsex", "f-", "f-0", "f--1", "f-x", "F-1", "f-1a", "f-٣"] {
            #expect(FleetJobID.parse(local) == nil, "\(local)")
        }
    }

    @Test("text arrays: quoted and escaped on the way in, read back as PostgreSQL prints them")
    func arrays() {
        let values = ["plain", "with space", "quote\"d", "back\\slash", "comma,brace{}", "", "NULL"]
        let literal = PostgresArray.text(values)
        #expect(literal == #"{"plain","with space","quote\"d","back\\slash","comma,brace{}","","NULL"}"#)
        #expect(PostgresArray.parseText(literal) == values)
        #expect(PostgresArray.text([nil, "x"]) == #"{NULL,"x"}"#)
        #expect(PostgresArray.bool([true, false]) == "{t,f}")
        // What PostgreSQL prints: unquoted where it can.
        #expect(PostgresArray.parseText("{a,b,\"c d\"}") == ["a", "b", "c d"])
        #expect(PostgresArray.parseText("{}") == [])
    }
}
