/// Booleans, integers and floats. A number is read as one token of the
/// characters any number may contain, then checked against the grammar as a
/// whole, so `1_000x` or `1.2.3` is one clear error rather than a number
/// followed by garbage.
extension TOMLParser {
    /// `true` or `false`; any other word is an error.
    mutating func parseBoolean() throws(TOMLError) -> TOMLValue {
        let start = scanner.offset
        while scanner.peek().isBareKeyByte { scanner.advance() }
        switch String(decoding: scanner.bytes[start..<scanner.offset], as: UTF8.self) {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case let word: throw scanner.error(Self.unquotedWord(word), at: start)
        }
    }

    /// An integer or a float: `+1_000`, `0xff`, `-3.5e-2`, `inf`, `-nan`.
    mutating func parseNumber() throws(TOMLError) -> TOMLValue {
        let start = scanner.offset
        while Self.isNumberByte(scanner.peek()) { scanner.advance() }
        let token = Array(scanner.bytes[start..<scanner.offset])
        do throws(NumberProblem) {
            return try Self.number(token)
        } catch {
            let text = String(decoding: token, as: UTF8.self)
            switch error {
            case .word: throw scanner.error(Self.unquotedWord(text), at: start)
            case .invalid(let why): throw scanner.error("invalid number \(Self.quoted(text)): \(why)", at: start)
            }
        }
    }

    /// Why a number token is not a number.
    enum NumberProblem: Error {
        /// The token is a word, not a number at all.
        case word
        case invalid(String)
    }

    /// The value of a whole number token.
    static func number(_ token: [UInt8]) throws(NumberProblem) -> TOMLValue {
        let signed = token.first == UInt8(ascii: "+") || token.first == UInt8(ascii: "-")
        let negative = token.first == UInt8(ascii: "-")
        let body = signed ? Array(token.dropFirst()) : token
        switch String(decoding: body, as: UTF8.self) {
        case "inf": return .float(negative ? -.infinity : .infinity)
        case "nan": return .float(negative ? -.nan : .nan)
        default: break
        }
        guard let first = body.first, first.isDigit else {
            throw signed ? .invalid("expected digits, inf or nan after the sign") : .word
        }
        if body.count >= 2 && first == UInt8(ascii: "0"), let radix = radix(of: body[1]) {
            guard !signed else { throw .invalid("a hexadecimal, octal or binary integer takes no sign") }
            return .integer(try radixInteger(Array(body.dropFirst(2)), radix: radix))
        }
        if body.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            return .float(try float(body, negative: negative))
        }
        guard isDigitGroups(body, digit: \.isDigit) else {
            throw .invalid("digits may be separated by single underscores only, and nothing else may follow them")
        }
        guard body.count == 1 || first != UInt8(ascii: "0") else { throw .invalid("leading zeros are not allowed") }
        // Accumulate towards the sign, so that Int64.min is reachable.
        var value: Int64 = 0
        for digit in body where digit != UInt8(ascii: "_") {
            let d = Int64(digit &- UInt8(ascii: "0"))
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? shifted.subtractingReportingOverflow(d) : shifted.addingReportingOverflow(d)
            guard !o1 && !o2 else { throw .invalid("out of the 64-bit integer range \(Int64.min) to \(Int64.max)") }
            value = next
        }
        return .integer(value)
    }

    /// The digits after `0x`, `0o` or `0b`; leading zeros are allowed there.
    private static func radixInteger(_ digits: [UInt8], radix: Int64) throws(NumberProblem) -> Int64 {
        let isDigit: (UInt8) -> Bool =
            switch radix {
            case 16: { $0.isHexDigit }
            case 8: { $0 >= 0x30 && $0 <= 0x37 }
            default: { $0 == 0x30 || $0 == 0x31 }
            }
        guard isDigitGroups(digits, digit: isDigit) else {
            throw .invalid("expected base-\(radix) digits, separated by single underscores only")
        }
        var value: Int64 = 0
        for digit in digits where digit != UInt8(ascii: "_") {
            let (shifted, o1) = value.multipliedReportingOverflow(by: radix)
            let (next, o2) = shifted.addingReportingOverflow(Int64(digit.hexDigitValue))
            guard !o1 && !o2 else { throw .invalid("larger than the 64-bit integer maximum \(Int64.max)") }
            value = next
        }
        return value
    }

    /// A decimal float without its sign: `3.14`, `5e+22`, `6.626e-34`.
    private static func float(_ body: [UInt8], negative: Bool) throws(NumberProblem) -> Double {
        let exponentAt = body.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        let mantissa = body[..<(exponentAt ?? body.endIndex)]
        let pointAt = mantissa.firstIndex(of: UInt8(ascii: "."))
        let whole = Array(mantissa[..<(pointAt ?? mantissa.endIndex)])
        guard isDigitGroups(whole, digit: \.isDigit) else { throw .invalid("expected digits before the point or exponent") }
        guard whole.count == 1 || whole[0] != UInt8(ascii: "0") else { throw .invalid("leading zeros are not allowed") }
        if let pointAt, !isDigitGroups(Array(mantissa[(pointAt + 1)...]), digit: \.isDigit) {
            throw .invalid("expected digits after the decimal point")
        }
        if let exponentAt {
            var exponent = body[(exponentAt + 1)...]
            if exponent.first == UInt8(ascii: "+") || exponent.first == UInt8(ascii: "-") { exponent = exponent.dropFirst() }
            guard isDigitGroups(Array(exponent), digit: \.isDigit) else { throw .invalid("expected digits in the exponent") }
        }
        let plain = String(decoding: body.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
        guard let magnitude = Double(plain), magnitude.isFinite else {
            throw .invalid("out of the range of a 64-bit float")
        }
        return negative ? -magnitude : magnitude
    }

    /// Digits in groups separated by single underscores: `1`, `1_000`; not `_1`, `1_`, `1__0` or nothing.
    private static func isDigitGroups(_ bytes: [UInt8], digit: (UInt8) -> Bool) -> Bool {
        guard let first = bytes.first, let last = bytes.last, digit(first), digit(last) else { return false }
        var previousWasUnderscore = false
        for b in bytes {
            if b == UInt8(ascii: "_") {
                if previousWasUnderscore { return false }
                previousWasUnderscore = true
            } else if digit(b) {
                previousWasUnderscore = false
            } else {
                return false
            }
        }
        return true
    }

    private static func radix(of prefix: UInt8) -> Int64? {
        switch prefix {
        case UInt8(ascii: "x"): 16
        case UInt8(ascii: "o"): 8
        case UInt8(ascii: "b"): 2
        default: nil
        }
    }

    /// The characters a number token may contain (letters for prefixes, hex digits, inf and nan).
    static func isNumberByte(_ b: UInt8) -> Bool {
        b.isBareKeyByte || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")
    }

    private static func unquotedWord(_ word: String) -> String {
        "expected a value, found the word \(quoted(word)) (a string must be quoted)"
    }

    /// `text` in quotes, shortened past 40 characters, for messages about tokens (which hold no quotes).
    static func quoted(_ text: String) -> String {
        "\"\(text.count > 40 ? text.prefix(40) + "…" : Substring(text))\""
    }
}
