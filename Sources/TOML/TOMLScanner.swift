/// A cursor over the UTF-8 bytes of a TOML document: whitespace, comments
/// and newlines, and turning byte offsets into line and column for errors.
///
/// Reading past the end yields 0, which can never be real content because
/// `TOMLParser` refuses a document with a raw NUL before it starts; every
/// loop that reads bytes therefore stops at the end by meeting a 0.
struct TOMLScanner {
    let bytes: [UInt8]
    /// The offset of the next byte to read.
    private(set) var offset = 0

    /// The line the cursor is on and the offset where it starts. Every line
    /// feed is consumed by `consumeNewline()` (comments and strings stop at
    /// one), which keeps these current without looking at every byte again.
    private var line = 1
    private var lineStart = 0
    /// The last position `position(of:)` resolved on the current line, so
    /// that many keys on one long line cost linear time in all.
    private var mark = (offset: 0, column: 1)

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    var isAtEnd: Bool { offset >= bytes.count }

    /// The byte `ahead` places after the cursor, or 0 past the end.
    func peek(_ ahead: Int = 0) -> UInt8 {
        let i = offset + ahead
        return i < bytes.count ? bytes[i] : 0
    }

    mutating func advance(_ count: Int = 1) {
        offset = min(offset + count, bytes.count)
    }

    /// Skips spaces and tabs, the only whitespace TOML has within a line.
    mutating func skipWhitespace() {
        while peek() == .space || peek() == .tab { offset += 1 }
    }

    /// At `#`: skips the comment up to (not including) its newline,
    /// refusing the control characters TOML forbids in comments.
    mutating func skipComment() throws(TOMLError) {
        while offset < bytes.count {
            // Nearly every byte of a comment is printable (or part of a
            // multi-byte scalar, all of which are >= 0x80): pass those quickly.
            let c = bytes[offset]
            if (c >= 0x20 && c != 0x7F) || c == .tab {
                offset += 1
                continue
            }
            if c == .lf || (c == .cr && peek(1) == .lf) { return }
            throw error("\(describe(at: offset)) is not allowed in a comment")
        }
    }

    /// Consumes one LF or CRLF and returns true, or returns false if there is none here.
    mutating func consumeNewline() throws(TOMLError) -> Bool {
        switch peek() {
        case .lf:
            offset += 1
        case .cr:
            guard peek(1) == .lf else { throw error("a carriage return must be followed by a line feed") }
            offset += 2
        default:
            return false
        }
        line += 1
        lineStart = offset
        mark = (offset, 1)
        return true
    }

    /// Skips whitespace, newlines and comments: the space between array elements.
    mutating func skipBlankSpace() throws(TOMLError) {
        while true {
            skipWhitespace()
            if peek() == .hash {
                try skipComment()
            } else if try !consumeNewline() {
                return
            }
        }
    }

    /// After a key/value pair or a table header: optional whitespace and
    /// comment, then a newline or the end of the document.
    mutating func expectEndOfLine(after what: String) throws(TOMLError) {
        skipWhitespace()
        if peek() == .hash { try skipComment() }
        if isAtEnd { return }
        guard try consumeNewline() else {
            throw error("expected a newline after \(what), found \(describe(at: offset))")
        }
    }

    // MARK: Positions and messages

    /// The line and column of byte `target`.
    mutating func position(of target: Int) -> TOMLPosition {
        let target = min(max(target, 0), bytes.count)
        guard target >= lineStart else {
            // An earlier line, such as where an unclosed string began: count from the start.
            return TOMLScanner.count(bytes[0..<target], from: (1, 1))
        }
        let from = mark.offset <= target ? mark : (offset: lineStart, column: 1)
        let position = TOMLScanner.count(bytes[from.offset..<target], from: (line, from.column))
        if position.line == line { mark = (target, position.column) }
        return position
    }

    /// The position after `span`, which starts at `start`.
    private static func count(_ span: ArraySlice<UInt8>, from start: (line: Int, column: Int)) -> TOMLPosition {
        var (line, column) = start
        for b in span {
            if b == .lf {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                // Continuation bytes belong to the scalar already counted.
                column += 1
            }
        }
        return TOMLPosition(line: line, column: column)
    }

    /// An error at byte `at` (the cursor when nil).
    mutating func error(_ message: String, at: Int? = nil) -> TOMLError {
        TOMLError(message, at: position(of: at ?? offset))
    }

    /// The character at byte `at`, named for a message: `"x"`, `"é" (U+00E9)`,
    /// `a newline`, `U+0007`, `the end of the document`.
    func describe(at: Int) -> String {
        guard at < bytes.count else { return "the end of the document" }
        let b = bytes[at]
        switch b {
        case .lf: return "a newline"
        case .cr: return "a carriage return"
        case .tab: return "a tab"
        case 0x20..<0x7F: return "\"\(Unicode.Scalar(b))\""
        case 0..<0x20, 0x7F: return "the control character \(TOMLScanner.codePoint(UInt32(b)))"
        default:
            // A scalar's leading byte tells how many bytes it has.
            let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
            let text = String(decoding: bytes[at..<min(at + length, bytes.count)], as: UTF8.self)
            let code = text.unicodeScalars.first.map { TOMLScanner.codePoint($0.value) } ?? "?"
            return "\"\(text)\" (\(code))"
        }
    }

    /// `U+00E9`.
    static func codePoint(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

extension UInt8 {
    static let tab: UInt8 = 0x09
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let hash = UInt8(ascii: "#")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let backslash = UInt8(ascii: "\\")

    /// A control character TOML allows neither in comments nor in strings:
    /// U+0000 to U+001F except tab, and U+007F. (LF and CR are newlines and
    /// are handled before this is asked.)
    var isForbiddenControl: Bool { (self < 0x20 && self != .tab) || self == 0x7F }

    var isDigit: Bool { self >= 0x30 && self <= 0x39 }

    var isHexDigit: Bool { isDigit || (self >= 0x41 && self <= 0x46) || (self >= 0x61 && self <= 0x66) }

    /// A-Z a-z 0-9 _ -: the characters of a bare key.
    var isBareKeyByte: Bool {
        isDigit || (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A) || self == 0x5F || self == 0x2D
    }
}
