import Testing
@testable import LoopdProtocol

/// The framer finds every newline wherever it falls: in the sixteen-byte
/// blocks its scan compares at once, in the bytes after the last block,
/// and across the ends of the reads that fed it.
@Suite struct LineFramerTests {
    /// Lines of every length from 0 to 40 bytes, some ending in `\r\n`.
    static let lines: [String] = (0...40).map { (n: Int) -> String in
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let body = String((0..<n).map { letters[$0 % letters.count] })
        return n % 3 == 0 ? body + "\r" : body
    }

    @Test func everyLineIsHandedOverWhateverTheReadsLookLike() {
        let text = Array(Self.lines.map { $0 + "\n" }.joined().utf8)
        let expected = Self.lines.map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
        for readSize in [1, 2, 7, 15, 16, 17, 31, 33, 64, text.count] {
            var framer = LineFramer(maxLineBytes: 64)
            var got: [String] = []
            var at = 0
            while at < text.count {
                let piece = text[at..<min(at + readSize, text.count)]
                let outcome = Array(piece).withUnsafeBytes { bytes in
                    framer.append(bytes) { got.append(String(decoding: $0, as: UTF8.self)) }
                }
                #expect(outcome == .ok)
                at += readSize
            }
            #expect(got == expected, "reads of \(readSize) bytes")
            #expect(framer.pendingBytes == 0)
        }
    }
}
