import Testing
@testable import TOML

// Documents the TOML 1.0 parser must refuse: each row gives a phrase the
// message must contain and, where it matters, the exact line and column.
// The last suites replay the inputs that crashed the previous parser, and bound nesting.

/// A document that must fail, a phrase of its message, and where (1-based).
struct InvalidTOML: Sendable, CustomTestStringConvertible {
    let name: String
    let toml: String
    let phrase: String
    let line: Int?
    let column: Int?
    init(_ name: String, _ toml: String, _ phrase: String, at line: Int? = nil, _ column: Int? = nil) {
        self.name = name
        self.toml = toml
        self.phrase = phrase
        self.line = line
        self.column = column
    }
    var testDescription: String { name }
}

private let invalidSyntax: [InvalidTOML] = [
    InvalidTOML("a raw NUL", "a = 1\nb = \"x\0\"", "a raw NUL byte is not allowed", at: 2, 7),
    InvalidTOML("a control character in a comment", "a = 1 # \u{1}\n", "U+0001 is not allowed in a comment", at: 1, 9),
    InvalidTOML("DEL in a comment", "# \u{7F}", "U+007F is not allowed in a comment", at: 1, 3),
    InvalidTOML("a lone carriage return", "a = 1\rb = 2", "carriage return must be followed by a line feed", at: 1, 6),
    InvalidTOML("a lone CR in a multi-line string", "s = \"\"\"a\rb\"\"\"", "must be followed by a line feed", at: 1, 9),
    InvalidTOML("a missing value", "[[workers]]\nname = \n", "expected a value, found a newline", at: 2, 8),
    InvalidTOML("a value at the end", "a =", "expected a value, found the end of the document", at: 1, 4),
    InvalidTOML("a missing =", "a 1", "expected \"=\" after the key a, found \"1\"", at: 1, 3),
    InvalidTOML("a missing key", "= 1", "expected a key", at: 1, 1),
    InvalidTOML("two keys", "a b = 1", "expected \"=\"", at: 1, 3),
    InvalidTOML("two values", "a = 1 2", "expected a newline after the value, found \"2\"", at: 1, 7),
    InvalidTOML("a key ending in a dot", "a. = 1", "expected a key", at: 1, 4),
    InvalidTOML("a key starting with a dot", ".a = 1", "expected a key", at: 1, 1),
    InvalidTOML("a non-ASCII bare key", "é = 1", "found \"é\" (U+00E9)", at: 1, 1),
    InvalidTOML("a multi-line string as a key", "\"\"\"a\"\"\" = 1", "a multi-line string cannot be a key", at: 1, 1),
    InvalidTOML("an unquoted string", "a = hello", "found the word \"hello\" (a string must be quoted)", at: 1, 5),
    InvalidTOML("an empty header", "[]", "expected a key", at: 1, 2),
    InvalidTOML("an unclosed header", "[a\nb = 1", "expected \"]\" to close the table header", at: 1, 3),
    InvalidTOML("a split ]]", "[[a] ]", "expected \"]]\"", at: 1, 5),
    InvalidTOML("a split [[", "[ [a]]", "expected a key", at: 1, 3),
    InvalidTOML("text after a header", "[a] b = 1", "expected a newline after the table header", at: 1, 5),
]

private let invalidRedefinitions: [InvalidTOML] = [
    InvalidTOML("a duplicate key", "a = 1\na = 2", "duplicate key a: already defined at line 1, column 1", at: 2, 1),
    InvalidTOML("a duplicate dotted key", "a.b = 1\na.b = 2", "duplicate key a.b", at: 2, 3),
    InvalidTOML("bare and quoted spellings of one key", "a = 1\n\"a\" = 2", "duplicate key a", at: 2, 1),
    InvalidTOML("a key over a dotted table", "a.b = 1\na = 2", "duplicate key a", at: 2, 1),
    InvalidTOML("a dotted key through a value", "a = 1\na.b = 2", "a is already an integer", at: 2, 1),
    InvalidTOML("a dotted key into an inline table", "a = {}\na.b = 1", "inline table", at: 2, 1),
    InvalidTOML("a table defined twice", "[a]\n[a]", "the table [a] is defined twice (first at line 1, column 2)", at: 2, 2),
    InvalidTOML("a super-table defined twice", "[a.b]\n[a]\n[a]", "defined twice (first at line 2, column 2)", at: 3, 2),
    InvalidTOML("a header after dotted keys", "a.b = 1\n[a]", "already defined by dotted keys at line 1, column 1", at: 2, 2),
    InvalidTOML("a header over a dotted sub-table", "[fruit]\napple.color = 'red'\n[fruit.apple]", "dotted keys", at: 3, 8),
    InvalidTOML(
        "dotted keys into a table its header defined", "[a.b.c]\nz = 9\n[a]\nb.c.t = 1",
        "cannot add to the table a.b.c with dotted keys", at: 4, 3),
    InvalidTOML("dotted keys define an implicit table", "[a.b.c]\n[a]\nb.d = 1\n[a.b]", "dotted keys", at: 4, 4),
    InvalidTOML("[[a]] after a static array", "a = []\n[[a]]", "static array", at: 2, 3),
    InvalidTOML("[a] after [[a]]", "[[a]]\n[a]", "array of tables", at: 2, 2),
    InvalidTOML("[[a]] after [a]", "[a]\n[[a]]", "it is a table", at: 2, 3),
    InvalidTOML("a header through a value", "a = 1\n[a.b]", "a is already an integer", at: 2, 2),
    InvalidTOML("a header into an inline table", "a = {b = 1}\n[a.c]", "inline table", at: 2, 2),
    InvalidTOML("a header into a static array", "a = [{}]\n[a.b]", "static array", at: 2, 2),
    InvalidTOML("a dotted key through a static array", "t = {a = [], a.b = 1}", "static array", at: 1, 14),
    InvalidTOML("a duplicate key in an inline table", "t = {a = 1, a = 2}", "duplicate key a", at: 1, 13),
    InvalidTOML("an inline table is complete once closed", "t = {a = {b = 1}, a.c = 2}", "inline table", at: 1, 19),
]

private let invalidStrings: [InvalidTOML] = [
    InvalidTOML("an unknown escape", #"s = "\a""#, #"invalid escape "\a""#, at: 1, 6),
    InvalidTOML("\\x is TOML 1.1", #"s = "\x41""#, #"invalid escape "\x""#, at: 1, 6),
    InvalidTOML("\\e is TOML 1.1", #"s = "\e""#, #"invalid escape "\e""#, at: 1, 6),
    InvalidTOML("an escaped space", #"s = "\ ""#, #"invalid escape \ followed by " ""#, at: 1, 6),
    InvalidTOML("a surrogate", #"s = "\uD800""#, "U+D800 is not a Unicode scalar value", at: 1, 6),
    InvalidTOML("beyond U+10FFFF", #"s = "\U00110000""#, "U+110000 is not a Unicode scalar value", at: 1, 6),
    InvalidTOML("a short \\u", #"s = "\u12""#, "needs exactly 4 hexadecimal digits", at: 1, 6),
    InvalidTOML("a short \\U", #"s = "\U0001F60""#, "needs exactly 8 hexadecimal digits", at: 1, 6),
    InvalidTOML("a newline in a basic string", "s = \"abc\ndef\"", "not closed on its line", at: 1, 9),
    InvalidTOML("a basic string at the end", "s = \"abc", "not closed on its line", at: 1, 9),
    InvalidTOML("a newline in a literal string", "s = 'abc\n'", "not closed on its line", at: 1, 9),
    InvalidTOML("an unclosed multi-line basic string", "s = \"\"\"abc\n", "never closed with \"\"\"", at: 1, 5),
    InvalidTOML("an unclosed multi-line literal string", "s = '''abc", "never closed with '''", at: 1, 5),
    InvalidTOML("a control character in a basic string", "s = \"a\u{1}\"", "U+0001 must be escaped", at: 1, 7),
    InvalidTOML("DEL in a literal string", "s = 'a\u{7F}'", "U+007F must be escaped", at: 1, 7),
    InvalidTOML("a control character in a multi-line string", "s = \"\"\"\n\u{8}\"\"\"", "U+0008 must be escaped", at: 2, 1),
    InvalidTOML("a control character after wide characters", "s = \"日本\u{1}\"", "U+0001", at: 1, 8),
    InvalidTOML("six quotes", "s = \"\"\"a" + String(repeating: "\"", count: 6), "6 quotes in a row", at: 1, 9),
    InvalidTOML("text after a line-ending backslash", "s = \"\"\"a\\ b\"\"\"", "invalid escape", at: 1, 9),
]

private let invalidNumbers: [InvalidTOML] = [
    InvalidTOML("a leading zero", "a = 01", "leading zeros are not allowed", at: 1, 5),
    InvalidTOML("a signed hexadecimal", "a = +0x1", "takes no sign", at: 1, 5),
    InvalidTOML("a double underscore", "a = 1__0", "single underscores"),
    InvalidTOML("a trailing underscore", "a = 1_", "single underscores"),
    InvalidTOML("a leading underscore", "a = _1", "the word \"_1\""),
    InvalidTOML("a prefix without digits", "a = 0x", "base-16 digits"),
    InvalidTOML("an uppercase prefix", "a = 0X1F", "invalid number \"0X1F\""),
    InvalidTOML("8 in octal", "a = 0o8", "base-8 digits"),
    InvalidTOML("2 in binary", "a = 0b102", "base-2 digits"),
    InvalidTOML("overflow", "a = 9223372036854775808", "out of the 64-bit integer range", at: 1, 5),
    InvalidTOML("underflow", "a = -9223372036854775809", "out of the 64-bit integer range"),
    InvalidTOML("hexadecimal overflow", "a = 0x8000000000000000", "larger than the 64-bit integer maximum"),
    InvalidTOML("a sign alone", "a = +", "expected digits, inf or nan after the sign"),
    InvalidTOML("a point without a fraction", "a = 1.", "expected digits after the decimal point"),
    InvalidTOML("a fraction without a whole part", "a = .5", "expected a value, found \".\"", at: 1, 5),
    InvalidTOML("a point before the exponent", "a = 1.e5", "expected digits after the decimal point"),
    InvalidTOML("an exponent without digits", "a = 1e", "expected digits in the exponent"),
    InvalidTOML("a float with a leading zero", "a = 01.5", "leading zeros are not allowed"),
    InvalidTOML("an underscore after the point", "a = 1._5", "expected digits after the decimal point"),
    InvalidTOML("two points", "a = 1.2.3", "expected digits after the decimal point"),
    InvalidTOML("a float beyond Double", "a = 1e400", "out of the range of a 64-bit float"),
    InvalidTOML("Inf", "a = Inf", "the word \"Inf\""),
    InvalidTOML("NaN", "a = NaN", "the word \"NaN\""),
    InvalidTOML("infinity", "a = infinity", "the word \"infinity\""),
    InvalidTOML("True", "a = True", "the word \"True\""),
    InvalidTOML("truee", "a = truee", "the word \"truee\""),
]

private let invalidDatesAndContainers: [InvalidTOML] = [
    InvalidTOML("month 13", "d = 1979-13-01", "the month must be 01 to 12, got 13", at: 1, 10),
    InvalidTOML("day 32", "d = 1979-01-32", "day 32 does not exist in month 1 of 1979", at: 1, 13),
    InvalidTOML("29 February 1900", "d = 1900-02-29", "day 29 does not exist in month 2 of 1900"),
    InvalidTOML("30 February 2000", "d = 2000-02-30", "day 30 does not exist in month 2 of 2000"),
    InvalidTOML("31 April", "d = 2023-04-31", "day 31 does not exist in month 4"),
    InvalidTOML("hour 24", "t = 24:00:00", "the hour must be 00 to 23, got 24", at: 1, 5),
    InvalidTOML("minute 60", "t = 12:60:00", "the minute must be 00 to 59, got 60", at: 1, 8),
    InvalidTOML("second 61", "t = 12:00:61", "the second must be 00 to 60, got 61", at: 1, 11),
    InvalidTOML("a time without seconds", "t = 07:32", "requires the seconds", at: 1, 10),
    InvalidTOML("a date-time without seconds", "d = 1979-05-27T07:32Z", "requires the seconds", at: 1, 21),
    InvalidTOML("a one-digit month", "d = 1979-5-27", "expected a date as YYYY-MM-DD", at: 1, 11),
    InvalidTOML("a point without fraction digits", "d = 1979-05-27T07:32:00.", "expected digits after the decimal point of the seconds", at: 1, 25),
    InvalidTOML("an offset of 24 hours", "d = 1979-05-27T07:32:00+24:00", "invalid UTC offset", at: 1, 24),
    InvalidTOML("an offset without a colon", "d = 1979-05-27T07:32:00+0700", "expected a UTC offset as Z or ±hh:mm", at: 1, 27),
    InvalidTOML("a date followed by a letter", "d = 1979-05-27X", "expected a newline after the value, found \"X\"", at: 1, 15),
    InvalidTOML("array elements without a comma", "a = [1 2]", "expected \",\" or \"]\" after an array element", at: 1, 8),
    InvalidTOML("an array of a lone comma", "a = [,]", "expected a value, found \",\"", at: 1, 6),
    InvalidTOML("two commas", "a = [1,,2]", "expected a value, found \",\"", at: 1, 8),
    InvalidTOML("an unclosed array", "a = [1,\n2", "the array starting here is never closed", at: 1, 5),
    InvalidTOML("a newline in an inline table", "t = {a = 1\n}", "must be on one line", at: 1, 11),
    InvalidTOML("a newline after {", "t = {\na = 1}", "must be on one line", at: 1, 6),
    InvalidTOML("a comment in an inline table", "t = {a = 1 # x\n}", "must be on one line", at: 1, 12),
    InvalidTOML("a trailing comma in an inline table", "t = {a = 1,}", "takes no comma after its last", at: 1, 12),
    InvalidTOML("a missing comma in an inline table", "t = {a = 1 b = 2}", "expected \",\" or \"}\"", at: 1, 12),
    InvalidTOML("an unclosed inline table", "t = {a = 1", "the inline table starting here is never closed", at: 1, 5),
]

@Suite("TOML parser: invalid documents")
struct TOMLInvalidDocumentTests {
    static func check(_ bad: InvalidTOML) {
        do {
            let table = try TOMLParser.parse(bad.toml)
            Issue.record("\(bad.name): accepted as \(table)")
        } catch {
            #expect(error.message.contains(bad.phrase), "\(bad.name): \(error)")
            if let line = bad.line { #expect(error.line == line, "\(bad.name): \(error)") }
            if let column = bad.column { #expect(error.column == column, "\(bad.name): \(error)") }
            #expect(!error.message.contains("\n"), "\(bad.name): a message spans lines")
        }
    }

    @Test(arguments: invalidSyntax) func syntax(_ bad: InvalidTOML) { Self.check(bad) }
    @Test(arguments: invalidRedefinitions) func redefinitions(_ bad: InvalidTOML) { Self.check(bad) }
    @Test(arguments: invalidStrings) func strings(_ bad: InvalidTOML) { Self.check(bad) }
    @Test(arguments: invalidNumbers) func numbers(_ bad: InvalidTOML) { Self.check(bad) }
    @Test(arguments: invalidDatesAndContainers) func datesAndContainers(_ bad: InvalidTOML) { Self.check(bad) }
}

/// The inputs that made the previous, third-party parser (toml++ 3 under a
/// Swift wrapper) abort the whole process on an assertion, so that
/// `loopd --check-config` or a SIGHUP reload died on a bad file
/// (docs/RELIABILITY.md, "Bugs found"). They are ordinary corpus entries in
/// Fuzz/corpus/FuzzConfigParser/ now, and must be ordinary errors.
@Suite("TOML parser: the inputs that crashed the previous parser")
struct FormerParserCrashRegressionTests {
    static let headers: [InvalidTOML] = [
        InvalidTOML("[=]", "[=]", "expected a key", at: 1, 2),
        InvalidTOML("[ *]", "[ *]", "expected a key", at: 1, 3),
        InvalidTOML("[ÿ (the fuzzer's [\\xFF)", "[\u{FF}", "found \"ÿ\" (U+00FF)", at: 1, 2),
        InvalidTOML("[\\xFF decoded with a replacement character", String(decoding: [0x5B, 0xFF], as: UTF8.self), "U+FFFD", at: 1, 2),
        InvalidTOML("[é]", "[é]", "expected a key", at: 1, 2),
        InvalidTOML("[[,]]", "[[,]]", "expected a key", at: 1, 3),
        InvalidTOML("[ at the end", "[", "expected a key (A-Z a-z 0-9 _ - or a quoted string), found the end of the document", at: 1, 2),
    ]

    @Test(arguments: headers)
    func tomlkitHeaderAbort_aHeaderThatCannotStartAKeyIsAnError(_ bad: InvalidTOML) {
        TOMLInvalidDocumentTests.check(bad)
    }

    @Test func tomlkitDateTimeAbort_aDateTimeWithoutATimeIsAnError() {
        TOMLInvalidDocumentTests.check(
            InvalidTOML("k = 1979-05-27T:", "k = 1979-05-27T:", "expected a time (hh:mm:ss) after \"T\", found \":\"", at: 1, 16))
        TOMLInvalidDocumentTests.check(InvalidTOML("at the end", "k = 1979-05-27T", "found the end of the document", at: 1, 16))
    }
}

@Suite("TOML parser: nesting and size bounds")
struct TOMLBoundsTests {
    private func nestedArrays(_ depth: Int) -> String {
        "a = " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
    }

    @Test("100 levels of arrays parse; 101 are refused at the 101st bracket")
    func nestedArrayLimit() throws {
        var value = try #require(try TOMLParser.parse(nestedArrays(100))["a"])
        var depth = 0
        while case .array(let elements) = value {
            depth += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(depth == 100)
        TOMLInvalidDocumentTests.check(InvalidTOML("101", nestedArrays(101), "nest deeper than 100 levels", at: 1, 105))
    }

    @Test("unbounded nesting is an error, not a stack overflow")
    func deepNestingIsRefused() {
        let deep = 100_000
        TOMLInvalidDocumentTests.check(InvalidTOML("arrays", "a = " + String(repeating: "[", count: deep), "nest deeper"))
        TOMLInvalidDocumentTests.check(InvalidTOML("inline tables", "a = " + String(repeating: "{b=", count: deep), "nest deeper"))
        TOMLInvalidDocumentTests.check(
            InvalidTOML("mixed", "a = " + String(repeating: "[{b=", count: deep), "nest deeper"))
        TOMLInvalidDocumentTests.check(
            InvalidTOML("a long header", "[" + Array(repeating: "a", count: deep).joined(separator: ".") + "]", "nests deeper"))
        TOMLInvalidDocumentTests.check(
            InvalidTOML("a long dotted key", Array(repeating: "a", count: deep).joined(separator: ".") + " = 1", "nests deeper"))
        // Keys add to the nesting of the values under them.
        TOMLInvalidDocumentTests.check(
            InvalidTOML("a deep header over a deep value", "[" + Array(repeating: "a", count: 60).joined(separator: ".") + "]\n"
                + Array(repeating: "b", count: 30).joined(separator: ".") + " = " + String(repeating: "[", count: 20), "nest deeper"))
    }

    @Test("headers of 100 keys parse; 101 are refused")
    func headerLimit() throws {
        let ok = try TOMLParser.parse("[" + Array(repeating: "k", count: 100).joined(separator: ".") + "]\nv = 1")
        var table = ok
        for _ in 0..<100 { table = try #require(table["k"]?.table) }
        #expect(table["v"] == 1)
        TOMLInvalidDocumentTests.check(
            InvalidTOML("101", "[" + Array(repeating: "k", count: 101).joined(separator: ".") + "]", "nests deeper", at: 1, 1))
    }

    @Test("time grows linearly with the document")
    func largeDocumentsParseInLinearTime() throws {
        let line = "k = {x = [1, 2.5, \"s\"], y.z = 1979-05-27, 'w' = \"\"\"a\"\"\"}\n"
        var big = ""
        for i in 0..<5_000 { big += "[t\(i)]\n" + line }
        let oneLine = "t = {" + (0..<5_000).map { "k\($0) = [\($0)]" }.joined(separator: ", ") + "}"
        let clock = ContinuousClock()
        for document in [big, oneLine] {
            let elapsed = try clock.measure { _ = try TOMLParser.parse(document) }
            // About 10 ms in a debug build; a quadratic step would take minutes.
            #expect(elapsed < .seconds(5), "\(elapsed) for \(document.utf8.count) bytes")
        }
        #expect(try TOMLParser.parse(big).count == 5_000)
    }
}
