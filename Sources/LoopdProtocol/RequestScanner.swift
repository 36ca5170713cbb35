/// Reads the plain parts of a request line in place: structure, member
/// names, and string, integer and boolean values without escapes. It never
/// judges: wherever the text holds anything else (an escape, a fraction,
/// `null`, a nested object, bad syntax), it answers nil and the caller hands
/// the whole line to the generic decoder, which says exactly what is wrong.
struct RequestScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var i = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Whether everything was read.
    var atEnd: Bool { i == bytes.count }

    /// The next byte, or nil at the end.
    var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    /// Skips JSON whitespace (the set `JSONParser` skips).
    mutating func skipSpace() {
        while i < bytes.count {
            let b = bytes[i]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            i += 1
        }
    }

    /// Consumes `byte` if it is next (after whitespace).
    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard i < bytes.count, bytes[i] == byte else { return false }
        i += 1
        return true
    }

    /// The bytes of a string without escapes or control characters, quotes
    /// excluded, and whether they are all ASCII; nil otherwise.
    mutating func rawString() -> (bytes: UnsafeBufferPointer<UInt8>, ascii: Bool)? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = i
        var high: UInt8 = 0
        return jsonByteClasses.withUnsafeBufferPointer { classes in
            while i < bytes.count {
                let b = bytes[i]
                if classes[Int(b)] & JSONByteClasses.endsRawRead != 0 {
                    guard b == UInt8(ascii: "\"") else { return nil }  // an escape or a control character
                    i += 1
                    return (UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)]), high < 0x80)
                }
                high |= b
                i += 1
            }
            return nil
        }
    }

    /// A string value (valid UTF-8, no escapes), or nil.
    mutating func string() -> String? {
        guard let (raw, ascii) = rawString() else { return nil }
        if ascii { return String(decoding: raw, as: UTF8.self) }
        return String(validating: raw, as: UTF8.self)
    }

    /// An integer written without fraction or exponent that fits in 64
    /// bits, or nil (a fraction, an overflow or bad syntax).
    mutating func integer() -> Int64? {
        skipSpace()
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        let start = i
        // Accumulate as a negative number: Int64.min has no positive twin.
        var value: Int64 = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int64(bytes[i] - 0x30))
            guard !o1, !o2 else { return nil }
            value = next
            i += 1
        }
        let digits = i - start
        guard digits > 0, digits == 1 || bytes[start] != 0x30 else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            return nil
        }
        if negative { return value }
        guard value != .min else { return nil }
        return -value
    }

    /// `true` or `false`, or nil.
    mutating func bool() -> Bool? {
        skipSpace()
        if matches("true") { return true }
        if matches("false") { return false }
        return nil
    }

    /// Whether `bytes` are exactly the ASCII `literal`.
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        for k in 0..<bytes.count where bytes[k] != literal.utf8Start[k] { return false }
        return true
    }

    private mutating func matches(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard bytes.count - i >= n else { return false }
        for k in 0..<n where bytes[i + k] != word.utf8Start[k] { return false }
        i += n
        return true
    }

    /// An array of strings (each valid UTF-8 without escapes), or nil.
    mutating func strings() -> [String]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var out: [String] = []
        if consume(UInt8(ascii: "]")) { return out }
        while true {
            guard let s = string() else { return nil }
            out.append(s)
            if consume(UInt8(ascii: ",")) { continue }
            return consume(UInt8(ascii: "]")) ? out : nil
        }
    }
}
