/// Parses one JSON document from UTF-8 bytes (RFC 8259): no trailing
/// garbage, nesting at most `maxDepth` deep. `.strict` (requests, the
/// daemon's side) also refuses duplicate member names, invalid UTF-8,
/// control characters and lone surrogates in strings; `.lenient` (replies,
/// a client's side) takes the last of duplicate names and repairs broken
/// text with U+FFFD instead, since a reply is read, never trusted.
public struct JSONParser {
    /// How much a document may bend the rules and still be read.
    public enum Strictness: Sendable {
        /// Everything RFC 8259 forbids is an error, and so are duplicate names.
        case strict
        /// Duplicate names and broken text in strings are taken as they come.
        case lenient
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let maxDepth: Int
    private let strict: Bool

    /// Parses `input`; throws `JSONSyntaxError` with the offset of the fault.
    public static func parse<C: Collection>(
        _ input: C, maxDepth: Int = 32, strictness: Strictness = .strict
    ) throws(JSONSyntaxError) -> JSON where C.Element == UInt8 {
        let array = Array(input)
        return try array.withUnsafeBufferPointer { (buf) throws(JSONSyntaxError) -> JSON in
            try parse(buffer: buf, maxDepth: maxDepth, strictness: strictness)
        }
    }

    /// Parses the bytes in place (no copy); throws `JSONSyntaxError` with the
    /// offset of the fault.
    public static func parse(
        buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = 32, strictness: Strictness = .strict
    ) throws(JSONSyntaxError) -> JSON {
        var p = JSONParser(bytes: buffer, maxDepth: maxDepth, strict: strictness == .strict)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == buffer.count else { throw p.fail("unexpected data after the document") }
        return v
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, strict: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.strict = strict
    }

    private func fail(_ reason: String) -> JSONSyntaxError { JSONSyntaxError(offset: i, reason: reason) }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of input") }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { throw fail("invalid literal") }
        i += n
    }

    private mutating func object(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        i += 1
        var members: [(String, JSON)] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try string()
            if strict, members.contains(where: { $0.0 == key }) { throw fail("duplicate member \"\(key)\"") }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            members.append((key, try value(depth: depth)))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func number() throws(JSONSyntaxError) -> JSON {
        let start = i
        var isInteger = true
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw fail("expected a digit") }
        // The integer part, accumulated as it is checked: most numbers in
        // the protocol are small integers, which need no text conversion.
        var magnitude: Int64 = 0
        let digitsStart = i
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count, isDigit(bytes[i]) { throw fail("leading zero") }
        } else {
            while i < bytes.count, isDigit(bytes[i]) {
                magnitude = magnitude &* 10 &+ Int64(bytes[i] &- 0x30)
                i += 1
            }
        }
        let atFraction = i < bytes.count && (bytes[i] == UInt8(ascii: ".") || bytes[i] | 0x20 == UInt8(ascii: "e"))
        if !atFraction && i - digitsStart <= 18 { return .integer(negative ? -magnitude : magnitude) }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("expected a digit after '.'") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("expected an exponent") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger, let n = Int64(text) { return .integer(n) }
        guard let d = Double(text), d.isFinite else { throw fail("number out of range") }
        return .double(d)
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private mutating func string() throws(JSONSyntaxError) -> String {
        i += 1  // opening quote
        let start = i
        // Fast path: no escapes, so the string is the bytes as they stand.
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 || !strict {
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
            defer { i += 1 }
            return try text(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        }
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 && strict { throw fail("control character in string") }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        let save = i
                        i += 2
                        let low = try hex4()
                        if (0xDC00...0xDFFF).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if strict {
                            throw fail("invalid low surrogate")
                        } else {
                            i = save  // the lone high surrogate becomes U+FFFD; the next escape stands alone
                        }
                    } else if strict {
                        throw fail("lone high surrogate")
                    }
                } else if (0xDC00...0xDFFF).contains(scalar), strict {
                    throw fail("lone low surrogate")
                }
                UTF8.encode(Unicode.Scalar(scalar) ?? "\u{FFFD}") { out.append($0) }
            default:
                throw fail("invalid escape")
            }
        }
        return try out.withUnsafeBufferPointer { (buffer) throws(JSONSyntaxError) -> String in try text(buffer) }
    }

    /// A string's UTF-8 bytes as text: validated when strict, repaired
    /// (U+FFFD) when lenient.
    private func text(_ utf8: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> String {
        guard strict else { return String(decoding: utf8, as: UTF8.self) }
        guard let s = String(validating: utf8, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
        return s
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case 0x30...0x39: d = UInt32(b - 0x30)
            case 0x41...0x46: d = UInt32(b - 0x41 + 10)
            case 0x61...0x66: d = UInt32(b - 0x61 + 10)
            default: throw fail("invalid hex digit")
            }
            v = v << 4 | d
            i += 1
        }
        return v
    }
}
