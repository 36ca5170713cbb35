extension JSON {
    /// The value as compact JSON text (no newlines, so it fits one line of
    /// JSON Lines).
    public func serialized() -> String {
        var out: [UInt8] = []
        write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the value's compact JSON text to `out`.
    public func write(into out: inout String) {
        out += serialized()
    }

    /// Appends the value's compact JSON text, as UTF-8, to `out`. Replies
    /// are written this way straight into a connection's output buffer.
    @inlinable
    public func write(into out: inout some ByteOutput) {
        switch self {
        case .null: JSON.append("null", to: &out)
        case .bool(let b): JSON.append(b ? "true" : "false", to: &out)
        case .integer(let n): JSON.writeInteger(n, into: &out)
        case .double(let d):
            if d.isFinite { out.appendUTF8("\(d)") } else { JSON.append("null", to: &out) }
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, v) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (k, (key, v)) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends an ASCII literal.
    @inlinable
    static func append(_ literal: StaticString, to out: inout some ByteOutput) {
        out.appendLiteral(literal)
    }

    /// Appends the decimal digits of `n` (what `String(n)` spells).
    @inlinable
    static func writeInteger(_ n: Int64, into out: inout some ByteOutput) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        out.appendDecimal(n.magnitude)
    }

    /// Appends `s` as a JSON string. Most strings need no escaping and are
    /// copied whole; U+2028 and U+2029 (escaped for JavaScript readers)
    /// start with byte 0xE2, so such strings take the careful path.
    @inlinable
    static func writeString(_ s: String, into out: inout some ByteOutput) {
        out.append(UInt8(ascii: "\""))
        let copied = s.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            let plain = jsonByteClasses.withUnsafeBufferPointer { classes in
                !utf8.contains { classes[Int($0)] & JSONByteClasses.needsEscapeOnWrite != 0 }
            }
            guard plain else { return false }
            out.appendBytes(utf8)
            return true
        }
        if copied != true { writeEscaped(s, into: &out) }
        out.append(UInt8(ascii: "\""))
    }

    @inlinable
    static func writeEscaped(_ s: String, into out: inout some ByteOutput) {
        for u in s.unicodeScalars {
            switch u {
            case "\"": append("\\\"", to: &out)
            case "\\": append("\\\\", to: &out)
            case "\n": append("\\n", to: &out)
            case "\r": append("\\r", to: &out)
            case "\t": append("\\t", to: &out)
            case _ where u.value < 0x20 || u.value == 0x7F || u.value == 0x2028 || u.value == 0x2029:
                // \u and four lowercase hex digits (all these are below 0x10000).
                append("\\u", to: &out)
                let hex: StaticString = "0123456789abcdef"
                for shift in stride(from: 12, through: 0, by: -4) {
                    out.append(hex.utf8Start[Int((u.value >> UInt32(shift)) & 0xF)])
                }
            default: UTF8.encode(u) { out.append($0) }
            }
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
    public init(nilLiteral: ()) { self = .null }
}
