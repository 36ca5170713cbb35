/// Reads a TOML 1.0 document (https://toml.io/en/v1.0.0) into a `TOMLTable`.
///
/// The parser works on the document's UTF-8 bytes in one pass, never traps
/// and never recurses deeper than `maxNesting`, whatever the input: every
/// problem is a `TOMLError` naming the line and column. This file reads the
/// document's lines, keys and headers; the other `TOMLParser+*.swift` files
/// read values, and `TOMLTableNode.swift` holds the rules about which table
/// may be defined or extended where.
public struct TOMLParser {
    /// How deeply tables and arrays may nest, counting the document's root
    /// as level 0. Real configs use three or four levels; the limit keeps
    /// recursion (parsing, building, and freeing the tree) far from the end
    /// of any thread's stack.
    static let maxNesting = 100

    var scanner: TOMLScanner
    /// The document's root table.
    let root = TOMLTableNode(origin: .root, path: "")
    /// The table that key/value lines currently go into: the root, or the last header's.
    var current: TOMLTableNode
    /// The nesting level of `current`: the number of keys in its header.
    var currentLevel = 0

    /// Parses `text`, which must be a whole document.
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var parser = TOMLParser(text)
        try parser.parseDocument()
        return parser.root.build()
    }

    private init(_ text: String) {
        scanner = TOMLScanner(text)
        current = root
    }

    /// A key segment and where it was written.
    struct KeySegment {
        let name: String
        let offset: Int
        let position: TOMLPosition
    }

    private mutating func parseDocument() throws(TOMLError) {
        // TOML allows no raw NUL anywhere. Refusing it first also lets the
        // scanner use 0 as its end-of-input byte.
        if let nul = scanner.bytes.firstIndex(of: 0) {
            throw scanner.error("a raw NUL byte is not allowed in TOML", at: nul)
        }
        // A byte order mark some editors write is not content.
        if scanner.peek() == 0xEF && scanner.peek(1) == 0xBB && scanner.peek(2) == 0xBF { scanner.advance(3) }
        while !scanner.isAtEnd {
            scanner.skipWhitespace()
            switch scanner.peek() {
            case .hash, .lf, .cr, 0:
                try scanner.expectEndOfLine(after: "a comment")
            case UInt8(ascii: "["):
                try parseHeader()
                try scanner.expectEndOfLine(after: "the table header")
            default:
                try parseKeyValue(into: current, level: currentLevel)
                try scanner.expectEndOfLine(after: "the value")
            }
        }
    }

    /// `[a.b]` or `[[a.b]]`; makes the table it names the current one.
    private mutating func parseHeader() throws(TOMLError) {
        let open = scanner.offset
        scanner.advance()
        let isArray = scanner.peek() == UInt8(ascii: "[")
        if isArray { scanner.advance() }
        scanner.skipWhitespace()
        let key = try parseKey()
        let close = isArray ? "]]" : "]"
        for i in 0..<close.utf8.count where scanner.peek(i) != UInt8(ascii: "]") {
            throw scanner.error(
                "expected \"\(close)\" to close the table header, found \(scanner.describe(at: scanner.offset + i))",
                at: scanner.offset + i)
        }
        scanner.advance(close.utf8.count)
        guard key.count <= Self.maxNesting else {
            throw scanner.error("the table header nests deeper than \(Self.maxNesting) levels", at: open)
        }
        current = try isArray ? appendArrayTable(key) : defineTable(key)
        currentLevel = key.count
    }

    /// `key = value` into `table`, whose nesting level is `level`.
    mutating func parseKeyValue(into table: TOMLTableNode, level: Int) throws(TOMLError) {
        let key = try parseKey()
        guard scanner.peek() == UInt8(ascii: "=") else {
            let name = TOMLTableNode.display(key.map(\.name))
            throw scanner.error("expected \"=\" after the key \(name), found \(scanner.describe(at: scanner.offset))")
        }
        guard level + key.count <= Self.maxNesting + 1 else {
            throw scanner.error("the key nests deeper than \(Self.maxNesting) levels", at: key[0].offset)
        }
        scanner.advance()
        scanner.skipWhitespace()
        let value = try parseValue(level: level + key.count)
        try insert(value, at: key, into: table)
    }

    /// A key: bare, quoted or dotted (`a . "b c" . 'd'`), and the whitespace after it.
    mutating func parseKey() throws(TOMLError) -> [KeySegment] {
        var segments: [KeySegment] = []
        while true {
            let start = scanner.offset
            let position = scanner.position(of: start)
            let name: String
            switch scanner.peek() {
            case .quote, .apostrophe:
                let quote = scanner.peek()
                if scanner.peek(1) == quote && scanner.peek(2) == quote {
                    throw scanner.error("a multi-line string cannot be a key")
                }
                name = quote == .quote ? try parseBasicString() : try parseLiteralString()
            case let c where c.isBareKeyByte:
                while scanner.peek().isBareKeyByte { scanner.advance() }
                name = String(decoding: scanner.bytes[start..<scanner.offset], as: UTF8.self)
            default:
                throw scanner.error(
                    "expected a key (A-Z a-z 0-9 _ - or a quoted string), found \(scanner.describe(at: start))")
            }
            segments.append(KeySegment(name: name, offset: start, position: position))
            scanner.skipWhitespace()
            guard scanner.peek() == UInt8(ascii: ".") else { return segments }
            // Dotted keys are bounded like headers; stop before the segment
            // list itself grows without limit.
            guard segments.count <= Self.maxNesting else {
                throw scanner.error("the key nests deeper than \(Self.maxNesting) levels", at: segments[0].offset)
            }
            scanner.advance()
            scanner.skipWhitespace()
        }
    }

    /// Any value. `level` is the nesting level an array or inline table here would have.
    mutating func parseValue(level: Int) throws(TOMLError) -> TOMLValue {
        let c = scanner.peek()
        switch c {
        case .quote:
            let multiline = scanner.peek(1) == .quote && scanner.peek(2) == .quote
            return .string(multiline ? try parseMultilineString(quote: .quote) : try parseBasicString())
        case .apostrophe:
            let multiline = scanner.peek(1) == .apostrophe && scanner.peek(2) == .apostrophe
            return .string(multiline ? try parseMultilineString(quote: .apostrophe) : try parseLiteralString())
        case UInt8(ascii: "["):
            return try parseArray(level: level)
        case UInt8(ascii: "{"):
            return try parseInlineTable(level: level)
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "i"), UInt8(ascii: "n"):
            return try parseNumber()
        case let c where c.isDigit:
            return try parseNumberOrDateTime()
        case let c where c.isBareKeyByte:
            // true, false, or a word that is none of them (an unquoted string, say).
            return try parseBoolean()
        default:
            throw scanner.error("expected a value, found \(scanner.describe(at: scanner.offset))")
        }
    }
}
