/// The four kinds of TOML string. Bytes are copied through unchanged
/// (the input is valid UTF-8 and every delimiter is ASCII, so a multi-byte
/// scalar is never split); escapes append their scalar's UTF-8 bytes.
extension TOMLParser {
    /// `"…"`: one line, with escapes.
    mutating func parseBasicString() throws(TOMLError) -> String {
        scanner.advance()
        var out: [UInt8] = []
        while true {
            let c = scanner.peek()
            switch c {
            case .quote:
                scanner.advance()
                return String(decoding: out, as: UTF8.self)
            case .backslash:
                try parseEscape(into: &out)
            case .lf, .cr, 0:
                throw scanner.error(
                    "the string is not closed on its line (a basic string ends with \" on the line it starts; use \"\"\" for several lines)")
            default:
                try checkStringByte(c)
                out.append(c)
                scanner.advance()
            }
        }
    }

    /// `'…'`: one line, taken literally.
    mutating func parseLiteralString() throws(TOMLError) -> String {
        scanner.advance()
        let start = scanner.offset
        while true {
            let c = scanner.peek()
            switch c {
            case .apostrophe:
                let text = String(decoding: scanner.bytes[start..<scanner.offset], as: UTF8.self)
                scanner.advance()
                return text
            case .lf, .cr, 0:
                throw scanner.error(
                    "the string is not closed on its line (a literal string ends with ' on the line it starts; use ''' for several lines)")
            default:
                try checkStringByte(c)
                scanner.advance()
            }
        }
    }

    /// `"""…"""` (`quote` `.quote`): several lines, escapes, and a backslash
    /// that ends a line joins it to the next line's first non-blank
    /// character. `'''…'''` (`quote` `.apostrophe`): several lines, taken
    /// literally.
    mutating func parseMultilineString(quote: UInt8) throws(TOMLError) -> String {
        let open = scanner.offset
        let escapes = quote == .quote
        scanner.advance(3)
        _ = try scanner.consumeNewline()  // A newline right after the delimiter is not content.
        var out: [UInt8] = []
        while true {
            let c = scanner.peek()
            switch c {
            case quote:
                if try closeMultiline(quote: quote, into: &out) { return String(decoding: out, as: UTF8.self) }
            case .backslash where escapes:
                if try !skipLineEndingBackslash() { try parseEscape(into: &out) }
            case .lf, .cr:
                _ = try scanner.consumeNewline()
                out.append(.lf)
            case 0 where scanner.isAtEnd:
                let delimiter = String(repeating: String(Unicode.Scalar(quote)), count: 3)
                throw scanner.error("the multi-line string starting here is never closed with \(delimiter)", at: open)
            default:
                try checkStringByte(c)
                out.append(c)
                scanner.advance()
            }
        }
    }

    /// At a run of `quote`s inside a multi-line string: fewer than three are
    /// content; three to five close the string, the first one or two of
    /// them still content (`""""` ends a string with a quote). Returns true
    /// when the string is closed.
    private mutating func closeMultiline(quote: UInt8, into out: inout [UInt8]) throws(TOMLError) -> Bool {
        var run = 0
        while scanner.peek(run) == quote { run += 1 }
        guard run <= 5 else {
            let delimiter = String(repeating: String(Unicode.Scalar(quote)), count: 3)
            throw scanner.error(
                "\(run) quotes in a row: a multi-line string holds at most two before its closing \(delimiter)",
                at: scanner.offset)
        }
        out.append(contentsOf: repeatElement(quote, count: run < 3 ? run : run - 3))
        scanner.advance(run)
        return run >= 3
    }

    /// At a backslash in a multi-line basic string: if only whitespace
    /// follows it on its line, skips it and every space, tab and newline
    /// after it, and returns true.
    private mutating func skipLineEndingBackslash() throws(TOMLError) -> Bool {
        var i = 1
        while scanner.peek(i) == .space || scanner.peek(i) == .tab { i += 1 }
        guard scanner.peek(i) == .lf || (scanner.peek(i) == .cr && scanner.peek(i + 1) == .lf) else { return false }
        scanner.advance(i)
        try scanner.skipBlankSpaceWithoutComments()
        return true
    }

    /// At a backslash: `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`.
    private mutating func parseEscape(into out: inout [UInt8]) throws(TOMLError) {
        let start = scanner.offset
        let c = scanner.peek(1)
        let simple: UInt8? =
            switch c {
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "t"): .tab
            case UInt8(ascii: "n"): .lf
            case UInt8(ascii: "f"): 0x0C
            case UInt8(ascii: "r"): .cr
            case .quote: .quote
            case .backslash: .backslash
            default: nil
            }
        if let simple {
            out.append(simple)
            scanner.advance(2)
            return
        }
        guard c == UInt8(ascii: "u") || c == UInt8(ascii: "U") else {
            let shown =
                (0x21..<0x7F).contains(c)
                ? "\"\\\(Unicode.Scalar(c))\"" : "\\ followed by \(scanner.describe(at: start + 1))"
            throw scanner.error(
                "invalid escape \(shown); TOML has \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX and \\UXXXXXXXX", at: start)
        }
        let digits = c == UInt8(ascii: "u") ? 4 : 8
        var value: UInt32 = 0
        for i in 0..<digits {
            let d = scanner.peek(2 + i)
            guard d.isHexDigit else {
                throw scanner.error(
                    "\\\(Unicode.Scalar(c)) needs exactly \(digits) hexadecimal digits, found \(scanner.describe(at: start + 2 + i))",
                    at: start)
            }
            value = value << 4 | UInt32(d.hexDigitValue)
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw scanner.error(
                "\(TOMLScanner.codePoint(value)) is not a Unicode scalar value (surrogates D800-DFFF and values above 10FFFF are not allowed)",
                at: start)
        }
        UTF8.encode(scalar) { out.append($0) }
        scanner.advance(2 + digits)
    }

    /// Refuses a control character TOML does not allow in a string.
    private mutating func checkStringByte(_ c: UInt8) throws(TOMLError) {
        if c.isForbiddenControl {
            throw scanner.error("\(scanner.describe(at: scanner.offset)) must be escaped in a string (as \\u\(TOMLScanner.codePoint(UInt32(c)).dropFirst(2)))")
        }
    }
}

extension UInt8 {
    /// 0-15 for a byte that `isHexDigit`.
    var hexDigitValue: UInt8 {
        switch self {
        case 0x30...0x39: self - 0x30
        case 0x41...0x46: self - 0x41 + 10
        default: self &- 0x61 &+ 10
        }
    }
}

extension TOMLScanner {
    /// Spaces, tabs and newlines: what a line-ending backslash trims.
    mutating func skipBlankSpaceWithoutComments() throws(TOMLError) {
        while true {
            skipWhitespace()
            if try !consumeNewline() { return }
        }
    }
}
