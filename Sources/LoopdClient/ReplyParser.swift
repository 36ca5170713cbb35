/// Parses a reply line into `JSON`: RFC 8259, without LoopdProtocol's
/// request-side strictness (duplicate names, the daemon's own limits), which
/// a reply from loopd never needs; it is on the path of every reply, so it
/// works on the bytes in place. Invalid UTF-8 in a string is repaired
/// (U+FFFD), never trusted.
struct ReplyParser {
    /// Deeper nesting than this is refused rather than recursed into.
    static let maxDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0

    /// The reply's value, or nil with a reason when it is not JSON.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSON, ReplyParseError> {
        var parser = ReplyParser(bytes: buffer)
        do throws(ReplyParseError) {
            parser.skipSpace()
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.i == buffer.count else { throw parser.fail("data after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private func fail(_ reason: String) -> ReplyParseError { ReplyParseError(offset: i, reason: reason) }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value(depth: Int) throws(ReplyParseError) -> JSON {
        guard i < bytes.count else { throw fail("unexpected end") }
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

    private mutating func literal(_ word: StaticString) throws(ReplyParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end") }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { throw fail("invalid literal") }
        i += n
    }

    private mutating func object(depth: Int) throws(ReplyParseError) -> JSON {
        guard depth <= Self.maxDepth else { throw fail("nesting too deep") }
        i += 1
        var members: [(String, JSON)] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        members.reserveCapacity(8)
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            members.append((key, try value(depth: depth)))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(ReplyParseError) -> JSON {
        guard depth <= Self.maxDepth else { throw fail("nesting too deep") }
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func number() throws(ReplyParseError) -> JSON {
        let start = i
        var negative = false
        if bytes[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        var magnitude: UInt64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            magnitude = magnitude &* 10 &+ UInt64(bytes[i] &- 0x30)
            digits += 1
            i += 1
        }
        guard digits > 0 else { throw fail("expected a digit") }
        let isInteger = i == bytes.count || (bytes[i] != UInt8(ascii: ".") && bytes[i] | 0x20 != UInt8(ascii: "e"))
        if isInteger && digits <= 18 {
            let value = Int64(magnitude)
            return .integer(negative ? -value : value)
        }
        while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 || bytes[i] == UInt8(ascii: ".")
            || bytes[i] | 0x20 == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
            i += 1
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if isInteger, let n = Int64(text) { return .integer(n) }
        guard let d = Double(text), d.isFinite else { throw fail("invalid number") }
        return .double(d)
    }

    private mutating func string() throws(ReplyParseError) -> String {
        i += 1  // the opening quote
        let start = i
        while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") { i += 1 }
        guard i < bytes.count else { throw fail("unterminated string") }
        if bytes[i] == UInt8(ascii: "\"") {
            defer { i += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw fail("unterminated escape") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"),
                   bytes[i + 1] == UInt8(ascii: "u") {
                    let save = i
                    i += 2
                    let low = try hex4()
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        i = save
                    }
                }
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                UTF8.encode(u) { out.append($0) }
            default:
                throw fail("invalid escape")
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func hex4() throws(ReplyParseError) -> UInt32 {
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

/// Why a reply line is not JSON.
struct ReplyParseError: Error, CustomStringConvertible {
    var offset: Int
    var reason: String
    var description: String { "invalid JSON at byte \(offset): \(reason)" }
}
