/// Appending text to byte buffers with one copy each: what the reply writer
/// and loopd's log lines are built from.
extension [UInt8] {
    /// Appends an ASCII literal.
    public mutating func appendLiteral(_ literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 of `s`.
    public mutating func appendUTF8(_ s: String) {
        let copied: Void? = s.utf8.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if copied == nil { append(contentsOf: s.utf8) }
    }

    /// Appends the decimal digits of `n` (what `String(n)` spells).
    public mutating func appendDecimal(_ n: UInt64) {
        if n < 10 {
            append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: n))
            return
        }
        var n = n
        // 24 bytes of room for UInt64's 20 digits, produced backwards.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &digits) { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            var k = buffer.count
            repeat {
                k -= 1
                buffer[k] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: n % 10)
                n /= 10
            } while n > 0
            append(contentsOf: UnsafeBufferPointer(rebasing: buffer[k...]))
        }
    }
}
