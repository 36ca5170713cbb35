import LoopdProtocol
import Testing

/// The one JSON parser of the protocol: strict for requests (the daemon's
/// side), lenient for replies (a client's side, LoopdClient).
@Suite struct JSONParserTests {
    private func parse(_ text: String, _ strictness: JSONParser.Strictness) -> JSON? {
        try? JSONParser.parse(Array(text.utf8), strictness: strictness)
    }

    @Test("requests: duplicate names, lone surrogates, control characters and invalid UTF-8 are refused")
    func strictRefuses() throws {
        #expect(parse(#"{"a":1,"a":2}"#, .strict) == nil)
        #expect(parse(#"["\ud800"]"#, .strict) == nil)
        #expect(parse(#"["\udc00"]"#, .strict) == nil)
        #expect(parse("[\"a\u{01}b\"]", .strict) == nil)
        #expect((try? JSONParser.parse([0x5B, 0x22, 0xFF, 0x22, 0x5D], strictness: .strict)) == nil)
    }

    @Test("replies: the same documents are read, broken text repaired with U+FFFD")
    func lenientRepairs() throws {
        #expect(parse(#"{"a":1,"a":2}"#, .lenient)?["a"] == .integer(1))
        #expect(parse(#"["\ud800x"]"#, .lenient) == .array([.string("\u{FFFD}x")]))
        #expect(try JSONParser.parse([0x5B, 0x22, 0xFF, 0x22, 0x5D], strictness: .lenient) == .array([.string("\u{FFFD}")]))
        #expect(parse(#"["\ud83d\ude00"]"#, .lenient) == .array([.string("😀")]))
    }

    @Test("numbers: small integers take the fast path, long ones and fractions the text path, both exact",
          arguments: [("0", JSON.integer(0)), ("-0", .integer(0)), ("-42", .integer(-42)),
                      ("999999999999999999", .integer(999_999_999_999_999_999)),
                      ("9223372036854775807", .integer(Int64.max)), ("-9223372036854775808", .integer(Int64.min)),
                      ("1.5", .double(1.5)), ("1e3", .double(1000)), ("12E-1", .double(1.2))])
    func numbers(text: String, value: JSON) throws {
        for strictness in [JSONParser.Strictness.strict, .lenient] {
            #expect(try JSONParser.parse(Array(text.utf8), strictness: strictness) == value)
        }
    }

    @Test("numbers: a leading zero, a bare sign or a dangling fraction are refused either way",
          arguments: ["01", "-", "1.", "1e", "--1"])
    func badNumbers(text: String) {
        #expect(parse(text, .strict) == nil && parse(text, .lenient) == nil)
    }
}
