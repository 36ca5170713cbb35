/// Splits a byte stream into lines of at most `maxLineBytes`, without
/// unbounded buffering. A line over the limit is a framing error the
/// connection cannot recover from (the rest of that line would be read as
/// requests), so the framer reports it and the owner closes the connection.
public struct LineFramer: Sendable {
    /// The longest line accepted, not counting its newline.
    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    private var scanFrom = 0

    public init(maxLineBytes: Int) {
        precondition(maxLineBytes > 0, "maxLineBytes must be positive")
        self.maxLineBytes = maxLineBytes
    }

    /// What `append` found.
    public enum Outcome: Sendable, Equatable {
        /// All bytes were framed (complete lines were handed over).
        case ok
        /// A line exceeded `maxLineBytes`.
        case lineTooLong
    }

    /// Bytes buffered and not yet handed over: an incomplete line, and,
    /// after a `drain` that stopped at its limit, the lines it left.
    public var pendingBytes: Int { buffer.count - consumed }

    /// Bytes at the front of `buffer` already handed over (after a drain
    /// that stopped at its limit); dropped at the next full drain.
    private var consumed = 0

    /// Feeds bytes; calls `onLine` for each complete line (without its `\n`,
    /// and without a `\r` before it). Stops at the first over-long line.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, onLine: (ArraySlice<UInt8>) -> Void) -> Outcome {
        feed(bytes)
        return drain(maxLines: .max, onLine: onLine) == .lineTooLong ? .lineTooLong : .ok
    }

    /// Buffers bytes without handing any line over (`drain` does).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
    }

    /// What `drain` found.
    public enum Drained: Sendable, Equatable {
        /// Every complete line was handed over; what is buffered is part of one.
        case done
        /// `maxLines` were handed over and at least one more complete line
        /// is buffered: drain again (the next pass) before feeding more.
        case more
        /// A line exceeded `maxLineBytes`.
        case lineTooLong
    }

    /// The index of the first newline at or after `start`, if any: a scan
    /// of the raw bytes sixteen at a time (one vector compare each), then
    /// the few left one by one.
    private func nextNewline(from start: Int) -> Int? {
        guard start < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!)
            let newlines = SIMD16<UInt8>(repeating: 0x0A)
            var i = start
            while i + 16 <= bytes.count {
                let found = base.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self) .== newlines
                if any(found) {
                    for lane in 0..<16 where found[lane] { return i + lane }
                }
                i += 16
            }
            while i < bytes.count {
                if bytes[i] == 0x0A { return i }
                i += 1
            }
            return nil
        }
    }

    /// Hands over up to `maxLines` complete lines of what was fed, in
    /// order; the rest stays buffered for the next call. Lets a reader
    /// take a bounded share of a pass per connection.
    public mutating func drain(maxLines: Int, onLine: (ArraySlice<UInt8>) -> Void) -> Drained {
        var handed = 0
        var lineStart = consumed
        var k = max(scanFrom, consumed)
        while let newline = nextNewline(from: k) {
            if handed == maxLines {
                // A complete line waits: the next drain scans it again
                // from its start (one line, not the buffer).
                consumed = lineStart
                scanFrom = lineStart
                return .more
            }
            var end = newline
            if end > lineStart, buffer[end - 1] == 0x0D { end -= 1 }
            if end - lineStart > maxLineBytes { return .lineTooLong }
            onLine(buffer[lineStart..<end])
            handed += 1
            lineStart = newline + 1
            k = newline + 1
        }
        if lineStart > 0 { buffer.removeFirst(lineStart) }
        consumed = 0
        scanFrom = buffer.count
        return buffer.count > maxLineBytes + 1 ? .lineTooLong : .done
    }
}
