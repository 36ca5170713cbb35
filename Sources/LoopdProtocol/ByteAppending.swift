/// Where the reply writer and loopd's log lines put their text: a growing
/// `[UInt8]`, or a `ByteCursor` over a fixed buffer.
public protocol ByteOutput {
    mutating func append(_ byte: UInt8)
    /// Appends the bytes `bytes` points at.
    mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>)
    /// Appends an ASCII literal.
    mutating func appendLiteral(_ literal: StaticString)
    /// Appends the UTF-8 of `s`.
    mutating func appendUTF8(_ s: String)
    /// Appends the decimal digits of `n` (what `String(n)` spells).
    mutating func appendDecimal(_ n: UInt64)
    /// Appends `,"name":` for an ASCII name that needs no escape.
    mutating func appendMemberName(_ name: StaticString)
}

/// Appending text to byte buffers with one copy each.
extension [UInt8]: ByteOutput {
    @inlinable
    public mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(contentsOf: bytes)
    }

    @inlinable
    public mutating func appendLiteral(_ literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inlinable
    public mutating func appendUTF8(_ s: String) {
        let copied: Void? = s.utf8.withContiguousStorageIfAvailable { append(contentsOf: $0) }
        if copied == nil { append(contentsOf: s.utf8) }
    }

    @inlinable
    public mutating func appendMemberName(_ name: StaticString) {
        append(contentsOf: #",""#.utf8)
        appendLiteral(name)
        append(contentsOf: #"":"#.utf8)
    }

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

/// Writes into a fixed buffer through its pointer. Each piece costs a
/// bounds check and a copy, where an array's append costs a uniqueness
/// check, a capacity check and a generic copy: for the short pieces of a
/// reply or a log line, a third of the instructions. A piece that does not
/// fit sets `overflowed` and nothing more is written; the caller then
/// writes the text into an array instead (`[UInt8].appendFormatted`).
public struct ByteCursor: ByteOutput {
    @usableFromInline let buffer: UnsafeMutableBufferPointer<UInt8>
    @usableFromInline var used = 0
    @usableFromInline var didOverflow = false

    /// How many bytes were written.
    @inlinable public var count: Int { used }
    /// Whether a piece did not fit (and nothing was written from it on).
    @inlinable public var overflowed: Bool { didOverflow }

    /// A cursor at the start of `buffer` (an empty one takes nothing).
    @inlinable
    public init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// Where the next byte goes; read only once a write is known to fit, so
    /// the buffer is not empty and has an address.
    @inlinable
    var next: UnsafeMutablePointer<UInt8> { buffer.baseAddress.unsafelyUnwrapped + used }

    @inlinable
    var room: Int { buffer.count - used }

    /// What was written.
    @inlinable
    public var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: buffer[..<used]) }

    @inlinable
    public mutating func append(_ byte: UInt8) {
        guard !didOverflow, room >= 1 else { return didOverflow = true }
        next.pointee = byte
        used += 1
    }

    @inlinable @inline(__always)
    public mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return }
        guard !didOverflow, bytes.count <= room else { return didOverflow = true }
        next.update(from: start, count: bytes.count)
        used += bytes.count
    }

    @inlinable @inline(__always)
    public mutating func appendLiteral(_ literal: StaticString) {
        appendBytes(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inlinable
    public mutating func appendUTF8(_ s: String) {
        let copied: Void? = s.utf8.withContiguousStorageIfAvailable { appendBytes($0) }
        guard copied == nil else { return }
        // Not contiguous (a bridged string): all of it or nothing, as above.
        guard !didOverflow, s.utf8.count <= room else { return didOverflow = true }
        for byte in s.utf8 { append(byte) }
    }

    /// Checks the room once for the name and its four marks.
    @inlinable
    public mutating func appendMemberName(_ name: StaticString) {
        let n = name.utf8CodeUnitCount
        guard !didOverflow, n + 4 <= room else { return didOverflow = true }
        let at = next
        at[0] = UInt8(ascii: ",")
        at[1] = UInt8(ascii: "\"")
        (at + 2).update(from: name.utf8Start, count: n)
        at[n + 2] = UInt8(ascii: "\"")
        at[n + 3] = UInt8(ascii: ":")
        used += n + 4
    }

    /// Writes the digits in place, last first, once their count is known.
    @inlinable
    public mutating func appendDecimal(_ n: UInt64) {
        var digits = 1
        var rest = n
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        guard !didOverflow, digits <= room else { return didOverflow = true }
        var n = n
        var k = digits
        repeat {
            k -= 1
            next[k] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: n % 10)
            n /= 10
        } while n > 0
        used += digits
    }
}

extension [UInt8] {
    /// Appends a text written first into a buffer of `stackBytes` on the
    /// stack, then copied in at once: one append instead of one a piece. A
    /// longer text is written again, straight into the array. Both closures
    /// write the same text, one into each kind of output.
    @inlinable
    public mutating func appendFormatted(stackBytes: Int, _ onStack: (inout ByteCursor) -> Void,
                                         else inArray: (inout [UInt8]) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackBytes) { stack in
            var cursor = ByteCursor(stack)
            onStack(&cursor)
            if cursor.overflowed { inArray(&self) } else { append(contentsOf: cursor.written) }
        }
    }
}
