/// Arrays and inline tables: the two values that nest, so the two places
/// where `TOMLParser.maxNesting` is enforced on values.
extension TOMLParser {
    /// `[ v, v, … ]`: elements of any types, with newlines, comments and a
    /// trailing comma allowed between them.
    mutating func parseArray(level: Int) throws(TOMLError) -> TOMLValue {
        let open = scanner.offset
        try checkNesting(level)
        scanner.advance()
        var elements: [TOMLValue] = []
        while true {
            try scanner.skipBlankSpace()
            if scanner.peek() == UInt8(ascii: "]") {
                scanner.advance()
                return .array(elements)
            }
            if scanner.isAtEnd { throw scanner.error("the array starting here is never closed with \"]\"", at: open) }
            elements.append(try parseValue(level: level + 1))
            try scanner.skipBlankSpace()
            switch scanner.peek() {
            case UInt8(ascii: ","):
                scanner.advance()
            case UInt8(ascii: "]"):
                scanner.advance()
                return .array(elements)
            case _ where scanner.isAtEnd:
                throw scanner.error("the array starting here is never closed with \"]\"", at: open)
            default:
                throw scanner.error(
                    "expected \",\" or \"]\" after an array element, found \(scanner.describe(at: scanner.offset))")
            }
        }
    }

    /// `{ k = v, … }`: on one line (a value inside may span lines), no
    /// trailing comma, and complete once closed.
    mutating func parseInlineTable(level: Int) throws(TOMLError) -> TOMLValue {
        let open = scanner.offset
        try checkNesting(level)
        scanner.advance()
        let node = TOMLTableNode(origin: .inline, path: "")
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "}") {
            scanner.advance()
            return .table(node.build())
        }
        while true {
            try checkInlineTableContinues(open: open)
            try parseKeyValue(into: node, level: level)
            scanner.skipWhitespace()
            switch scanner.peek() {
            case UInt8(ascii: ","):
                scanner.advance()
                scanner.skipWhitespace()
                if scanner.peek() == UInt8(ascii: "}") {
                    throw scanner.error("an inline table takes no comma after its last key/value pair")
                }
            case UInt8(ascii: "}"):
                scanner.advance()
                return .table(node.build())
            default:
                try checkInlineTableContinues(open: open)
                throw scanner.error(
                    "expected \",\" or \"}\" after a key/value pair in the inline table, found \(scanner.describe(at: scanner.offset))")
            }
        }
    }

    /// Refuses the end of the line or document inside an inline table.
    private mutating func checkInlineTableContinues(open: Int) throws(TOMLError) {
        switch scanner.peek() {
        case .lf, .cr, .hash:
            throw scanner.error(
                "an inline table must be on one line (TOML 1.0 allows no newline or comment between its braces); use a [table] instead")
        case _ where scanner.isAtEnd:
            throw scanner.error("the inline table starting here is never closed with \"}\"", at: open)
        default:
            break
        }
    }

    private mutating func checkNesting(_ level: Int) throws(TOMLError) {
        guard level <= Self.maxNesting else {
            throw scanner.error("arrays and tables nest deeper than \(Self.maxNesting) levels")
        }
    }
}
