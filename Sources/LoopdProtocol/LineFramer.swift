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

    /// Bytes buffered of an incomplete line.
    public var pendingBytes: Int { buffer.count }

    /// Feeds bytes; calls `onLine` for each complete line (without its `\n`,
    /// and without a `\r` before it). Stops at the first over-long line.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, onLine: (ArraySlice<UInt8>) -> Void) -> Outcome {
        buffer.append(contentsOf: bytes)
        var lineStart = 0
        var k = scanFrom
        while k < buffer.count {
            if buffer[k] == 0x0A {
                var end = k
                if end > lineStart, buffer[end - 1] == 0x0D { end -= 1 }
                if end - lineStart > maxLineBytes { return .lineTooLong }
                onLine(buffer[lineStart..<end])
                lineStart = k + 1
            }
            k += 1
        }
        if lineStart > 0 { buffer.removeFirst(lineStart) }
        scanFrom = buffer.count
        return buffer.count > maxLineBytes + 1 ? .lineTooLong : .ok
    }
}
