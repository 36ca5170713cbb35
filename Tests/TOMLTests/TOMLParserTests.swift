import Foundation
import Testing
@testable import TOML

// The TOML 1.0 parser (Sources/TOML), area by area of the
// specification: each row is a document and the exact tree it must give.
// TOMLParserInvalidTests.swift holds the documents it must refuse.

/// A document and the value tree it must parse to. Tables compare their keys
/// in order, so each expected literal also checks that order is kept.
struct ValidTOML: Sendable, CustomTestStringConvertible {
    let name: String
    let toml: String
    let expected: TOMLTable
    init(_ name: String, _ toml: String, _ expected: TOMLTable) {
        self.name = name
        self.toml = toml
        self.expected = expected
    }
    var testDescription: String { name }
}

private func date(_ y: Int, _ m: Int, _ d: Int) -> TOMLDate { TOMLDate(y, m, d) }
private func time(_ h: Int, _ m: Int, _ s: Int, _ fraction: String = "") -> TOMLTime {
    TOMLTime(h, m, s, fraction: fraction)
}

private let validCommentsAndWhitespace: [ValidTOML] = [
    ValidTOML("empty document", "", [:]),
    ValidTOML("only comments and blank lines", "# one\n\n  \t# two\n\t\n", [:]),
    ValidTOML("CRLF newlines", "a = 1\r\nb = 'x'\r\n# c\r\n\r\n", ["a": 1, "b": "x"]),
    ValidTOML("tabs and spaces around keys and =", "\t a \t=\t 1 \t# trailing\n", ["a": 1]),
    ValidTOML("no newline at the end", "a = true", ["a": true]),
    ValidTOML("a leading byte order mark", "\u{FEFF}a = 1\n", ["a": 1]),
    ValidTOML("comments hold any text but controls", "a = 1 # é\t\"' [x] = {\n# ]]\n", ["a": 1]),
]

private let validKeys: [ValidTOML] = [
    ValidTOML(
        "bare keys", "key = 1\nbare_key = 2\nbare-key = 3\n1234 = 4\n-_- = 5\n",
        ["key": 1, "bare_key": 2, "bare-key": 3, "1234": 4, "-_-": 5]),
    ValidTOML(
        "quoted keys", "\"127.0.0.1\" = 1\n\"ʎǝʞ\" = 2\n'key2' = 3\n'quoted \"value\"' = 4\n\"\" = 5\n",
        ["127.0.0.1": 1, "ʎǝʞ": 2, "key2": 3, "quoted \"value\"": 4, "": 5]),
    ValidTOML("escapes in a quoted key", #""a\tb\u00e9" = 1"#, ["a\tbé": 1]),
    ValidTOML(
        "dotted keys make tables",
        "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\nsite.\"google.com\" = true\n",
        ["name": "Orange", "physical": ["color": "orange", "shape": "round"], "site": ["google.com": true]]),
    ValidTOML("whitespace around dots", "a . b\t.\t'c' = 1", ["a": ["b": ["c": 1]]]),
    ValidTOML("a float-looking key is two keys", "3.14159 = \"pi\"", ["3": ["14159": "pi"]]),
    ValidTOML(
        "dotted keys in any order", "a.x = 1\nb.y = 2\na.z = 3\n", ["a": ["x": 1, "z": 3], "b": ["y": 2]]),
    ValidTOML("keys keep the document's order", "z = 1\na = 2\nm = 3\n", ["z": 1, "a": 2, "m": 3]),
]

private let validStrings: [ValidTOML] = [
    ValidTOML(
        "every basic escape", #"s = "\b\t\n\f\r\"\\ \u00E9 \U0001F600 \u0041""#,
        ["s": .string("\u{8}\t\n\u{C}\r\"\\ é 😀 A")]),
    ValidTOML(
        "a NUL escape is a real NUL", #"a = "x\u0000y""# + "\n" + #"b = "\U00000000""#,
        ["a": "x\u{0}y", "b": "\u{0}"]),
    ValidTOML("tab and non-ASCII as they are", "s = \"a\tb é 日本 \u{85}\"", ["s": "a\tb é 日本 \u{85}"]),
    ValidTOML(
        "literal strings keep backslashes", #"p = 'C:\Users\nodejs\templates'"# + "\n" + #"r = '<\i\c*\s*>'"#,
        ["p": #"C:\Users\nodejs\templates"#, "r": #"<\i\c*\s*>"#]),
    ValidTOML("multi-line basic: the first newline is trimmed", "s = \"\"\"\nRoses\nViolets\"\"\"", ["s": "Roses\nViolets"]),
    ValidTOML("multi-line basic: CRLF reads as LF", "s = \"\"\"\r\na\r\nb\r\n\"\"\"", ["s": "a\nb\n"]),
    ValidTOML(
        "multi-line basic: a line-ending backslash joins lines",
        "s = \"\"\"\nThe quick \\\n\n   brown \\   \n  fox \\\r\n\t jumps.\\\n\"\"\"",
        ["s": "The quick brown fox jumps."]),
    ValidTOML(
        "multi-line basic: one or two quotes inside",
        #"s = """Two quotation marks: "". Simple enough.""""#, ["s": #"Two quotation marks: "". Simple enough."#]),
    ValidTOML(
        "multi-line basic: quotes right before the closing delimiter",
        "a = \"\"\"\"one\"\"\"\"\nb = \"\"\"\"\"two\"\"\"\"\"", ["a": #""one""#, "b": #"""two"""#]),
    ValidTOML("multi-line basic: escaped quotes", #"s = """a\"""b""""#, ["s": #"a"""b"#]),
    ValidTOML("multi-line basic: escapes work", "s = \"\"\"\\tx\\u00e9\"\"\"", ["s": "\txé"]),
    ValidTOML("multi-line literal", "s = '''\nfirst\n  second \\n\r\n'''", ["s": "first\n  second \\n\n"]),
    ValidTOML(
        "multi-line literal: quotes inside and before the end",
        "s = ''''That,' she said, 'is still pointless.''''", ["s": "'That,' she said, 'is still pointless.'"]),
    ValidTOML(
        "empty strings of every kind", "a = \"\"\nb = ''\nc = \"\"\"\"\"\"\nd = ''''''\ne = \"\"\"\n\"\"\"",
        ["a": "", "b": "", "c": "", "d": "", "e": ""]),
]

private let validIntegers: [ValidTOML] = [
    ValidTOML(
        "decimal integers", "a = +99\nb = 42\nc = 0\nd = -17\ne = 1_000\nf = 5_349_221\ng = 1_2_3_4_5\nh = -0\ni = +0",
        ["a": 99, "b": 42, "c": 0, "d": -17, "e": 1000, "f": 5_349_221, "g": 12345, "h": 0, "i": 0]),
    ValidTOML(
        "hexadecimal, octal and binary",
        "a = 0xDEADBEEF\nb = 0xdead_beef\nc = 0x00ff\nd = 0o01234567\ne = 0o755\nf = 0b11010110\ng = 0x7FFFFFFFFFFFFFFF",
        ["a": 0xDEAD_BEEF, "b": 0xDEAD_BEEF, "c": 255, "d": 0o1234567, "e": 0o755, "f": 0b1101_0110, "g": .integer(.max)]),
    ValidTOML(
        "the 64-bit bounds", "max = 9223372036854775807\nmin = -9223372036854775808",
        ["max": .integer(.max), "min": .integer(.min)]),
]

private let validFloats: [ValidTOML] = [
    ValidTOML(
        "fractions and exponents",
        "a = +1.0\nb = 3.1415\nc = -0.01\nd = 5e+22\ne = 1e06\nf = -2E-2\ng = 6.626e-34\nh = 224_617.445_991_228\ni = 0e0\nj = 1e1_0",
        ["a": 1.0, "b": 3.1415, "c": -0.01, "d": 5e22, "e": 1e6, "f": -0.02, "g": 6.626e-34, "h": 224_617.445_991_228,
         "i": 0.0, "j": 1e10]),
    ValidTOML("signed zeros stay signed", "a = -0.0\nb = +0.0", ["a": .float(-0.0), "b": 0.0]),
    ValidTOML(
        "inf and nan with signs", "a = inf\nb = +inf\nc = -inf\nd = nan\ne = +nan\nf = -nan",
        ["a": .float(.infinity), "b": .float(.infinity), "c": .float(-.infinity), "d": .float(.nan),
         "e": .float(.nan), "f": .float(-.nan)]),
    ValidTOML("a float is never an integer", "a = 1.0\nb = 1e0\nc = 2E3", ["a": .float(1), "b": .float(1), "c": .float(2000)]),
]

private let validBooleansAndDates: [ValidTOML] = [
    ValidTOML("booleans", "a = true\nb = false", ["a": true, "b": false]),
    ValidTOML(
        "offset date-times",
        "a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00-07:00\nc = 1979-05-27T00:32:00.999999+05:30\n"
            + "d = 1979-05-27 07:32:00z\ne = 1979-05-27t07:32:00-00:00",
        [
            "a": .offsetDateTime(TOMLOffsetDateTime(date: date(1979, 5, 27), time: time(7, 32, 0), offset: .utc)),
            "b": .offsetDateTime(
                TOMLOffsetDateTime(
                    date: date(1979, 5, 27), time: time(0, 32, 0), offset: TOMLOffset(minutes: -420, description: "-07:00"))),
            "c": .offsetDateTime(
                TOMLOffsetDateTime(
                    date: date(1979, 5, 27), time: time(0, 32, 0, "999999"),
                    offset: TOMLOffset(minutes: 330, description: "+05:30"))),
            "d": .offsetDateTime(
                TOMLOffsetDateTime(
                    date: date(1979, 5, 27), time: time(7, 32, 0), separator: " ",
                    offset: TOMLOffset(minutes: 0, description: "z"))),
            "e": .offsetDateTime(
                TOMLOffsetDateTime(
                    date: date(1979, 5, 27), time: time(7, 32, 0), separator: "t",
                    offset: TOMLOffset(minutes: 0, description: "-00:00"))),
        ]),
    ValidTOML(
        "local date-times", "a = 1979-05-27T07:32:00\nb = 1979-05-27 00:32:00.999999",
        [
            "a": .localDateTime(TOMLLocalDateTime(date: date(1979, 5, 27), time: time(7, 32, 0))),
            "b": .localDateTime(TOMLLocalDateTime(date: date(1979, 5, 27), time: time(0, 32, 0, "999999"), separator: " ")),
        ]),
    ValidTOML(
        "local dates, leap days included",
        "a = 1979-05-27\nb = 2000-02-29\nc = 2024-02-29\nd = 0001-01-01\ne = 1979-12-31 # a date, then a comment",
        [
            "a": .localDate(date(1979, 5, 27)), "b": .localDate(date(2000, 2, 29)), "c": .localDate(date(2024, 2, 29)),
            "d": .localDate(date(1, 1, 1)), "e": .localDate(date(1979, 12, 31)),
        ]),
    ValidTOML(
        "local times, a leap second included", "a = 07:32:00\nb = 00:32:00.999999\nc = 23:59:60",
        ["a": .localTime(time(7, 32, 0)), "b": .localTime(time(0, 32, 0, "999999")), "c": .localTime(time(23, 59, 60))]),
]

private let validArraysAndInlineTables: [ValidTOML] = [
    ValidTOML(
        "arrays of every kind",
        "integers = [ 1, 2, 3 ]\ncolors = [ \"red\", 'yellow', \"\"\"green\"\"\" ]\nnested = [ [ 1, 2 ], [3, 4, 5] ]\n"
            + "mixed = [ [ 1, 2 ], [\"a\", 'b'], 1.5, true ]\nempty = []\nblank = [ ]",
        [
            "integers": [1, 2, 3], "colors": ["red", "yellow", "green"], "nested": [[1, 2], [3, 4, 5]],
            "mixed": [[1, 2], ["a", "b"], 1.5, true], "empty": [], "blank": [],
        ]),
    ValidTOML(
        "multi-line arrays with comments and a trailing comma",
        "a = [\n  1, # one\n  2,\n  # nothing more\n]\nb = [\r\n'x',\r\n]\nc = [\n]",
        ["a": [1, 2], "b": ["x"], "c": []]),
    ValidTOML(
        "an array of inline tables", "points = [ { x = 1, y = 2 }, { x = 7, y = 8 } ]",
        ["points": [["x": 1, "y": 2], ["x": 7, "y": 8]]]),
    ValidTOML(
        "inline tables",
        "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = {x=1,y=2}\nanimal = { type.name = \"pug\" }\n"
            + "empty = {}\nnested = { a = { b = { c = 1 } } }\ndotted = { a.b = 1, a.c = 2 }",
        [
            "name": ["first": "Tom", "last": "Preston-Werner"], "point": ["x": 1, "y": 2], "animal": ["type": ["name": "pug"]],
            "empty": [:], "nested": ["a": ["b": ["c": 1]]], "dotted": ["a": ["b": 1, "c": 2]],
        ]),
    ValidTOML(
        "a value inside an inline table may span lines", "a = { list = [\n1,\n2\n], s = \"\"\"\nx\"\"\" }",
        ["a": ["list": [1, 2], "s": "x"]]),
]

private let validTables: [ValidTOML] = [
    ValidTOML(
        "tables", "[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n[table-2]\nkey1 = \"another string\"\nkey2 = 456",
        ["table-1": ["key1": "some string", "key2": 123], "table-2": ["key1": "another string", "key2": 456]]),
    ValidTOML("a header with whitespace and quoted keys", "[ a . \"b c\" . 'd' ]\nx = 1", ["a": ["b c": ["d": ["x": 1]]]]),
    ValidTOML(
        "implicit super-tables may be defined later", "[x.y.z.w]\na = 1\n[x]\nb = 2",
        ["x": ["y": ["z": ["w": ["a": 1]]], "b": 2]]),
    ValidTOML("empty tables", "[a]\n[b.c]\n", ["a": [:], "b": ["c": [:]]]),
    ValidTOML(
        "a header adds a sub-table to a table made by dotted keys",
        "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
        ["fruit": ["apple": ["color": "red", "taste": ["sweet": true], "texture": ["smooth": true]]]]),
    ValidTOML("a root dotted key, then a sub-table header", "a.b = 1\n[a.c]\nd = 2", ["a": ["b": 1, "c": ["d": 2]]]),
    ValidTOML(
        "an array of tables",
        "[[products]]\nname = \"Hammer\"\nsku = 738594937\n\n[[products]]  # empty\n\n[[products]]\nname = \"Nail\"\ncolor = \"gray\"",
        ["products": [["name": "Hammer", "sku": 738_594_937], [:], ["name": "Nail", "color": "gray"]]]),
    ValidTOML(
        "nested arrays of tables refer to the last table",
        """
        [[fruits]]
        name = "apple"
        [fruits.physical]
        color = "red"
        [[fruits.varieties]]
        name = "red delicious"
        [[fruits.varieties]]
        name = "granny smith"
        [[fruits]]
        name = "banana"
        [[fruits.varieties]]
        name = "plantain"
        """,
        [
            "fruits": [
                [
                    "name": "apple", "physical": ["color": "red"],
                    "varieties": [["name": "red delicious"], ["name": "granny smith"]],
                ],
                ["name": "banana", "varieties": [["name": "plantain"]]],
            ]
        ]),
    ValidTOML(
        "[[a.b]] inside a table", "[a]\n[[a.b]]\nx = 1\n[[a.b]]\nx = 2\n[a.c]", ["a": ["b": [["x": 1], ["x": 2]], "c": [:]]]),
    ValidTOML("[[a.b]] with an implicit a", "[[a.b]]\n[[a.b]]\n[a]\nk = 1", ["a": ["b": [[:], [:]], "k": 1]]),
]

@Suite("TOML parser: valid documents")
struct TOMLValidDocumentTests {
    private func check(_ doc: ValidTOML) {
        do {
            let table = try TOMLParser.parse(doc.toml)
            #expect(table == doc.expected, "\(doc.name)")
        } catch {
            Issue.record("\(doc.name): \(error)")
        }
    }

    @Test(arguments: validCommentsAndWhitespace) func commentsAndWhitespace(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validKeys) func keys(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validStrings) func strings(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validIntegers) func integers(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validFloats) func floats(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validBooleansAndDates) func booleansAndDates(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validArraysAndInlineTables) func arraysAndInlineTables(_ doc: ValidTOML) { check(doc) }
    @Test(arguments: validTables) func tables(_ doc: ValidTOML) { check(doc) }

    @Test("dates and times print back as written")
    func dateTimesPrintAsWritten() throws {
        let written = [
            "1979-05-27T07:32:00Z", "1979-05-27 00:32:00.999999-07:00", "1979-05-27t07:32:00z", "1979-05-27T07:32:00+00:00",
            "1979-05-27T07:32:00", "1979-05-27 07:32:00.5", "0099-01-02", "07:32:00", "00:00:00.000000000001",
        ]
        for text in written {
            let value = try #require(try TOMLParser.parse("v = \(text)")["v"])
            let shown: String? =
                switch value {
                case .offsetDateTime(let d): d.description
                case .localDateTime(let d): d.description
                case .localDate(let d): d.description
                case .localTime(let t): t.description
                default: nil
                }
            #expect(shown == text)
        }
    }

    @Test("fractional seconds past nanoseconds are truncated, not rounded")
    func nanosecondsTruncate() {
        #expect(TOMLTime(0, 0, 0, fraction: "9999999999").nanosecond == 999_999_999)
        #expect(TOMLTime(0, 0, 0, fraction: "5").nanosecond == 500_000_000)
        #expect(TOMLTime(0, 0, 0, fraction: "").nanosecond == 0)
    }

    @Test("each key remembers its line and column, counted in Unicode scalars")
    func keyPositions() throws {
        let root = try TOMLParser.parse("[server]\nsocket = 'x'\n  [limits]\n  max = 1\nt = {\"日本\" = 1, b = 2}\n")
        #expect(root.position(of: "server") == TOMLPosition(line: 1, column: 2))
        #expect(root.position(of: "limits") == TOMLPosition(line: 3, column: 4))
        let server = try #require(root["server"]?.table)
        #expect(server.position(of: "socket") == TOMLPosition(line: 2, column: 1))
        let limits = try #require(root["limits"]?.table)
        #expect(limits.position(of: "max") == TOMLPosition(line: 4, column: 3))
        #expect(limits["t"]?.table?.position(of: "b") == TOMLPosition(line: 5, column: 16))
    }

    @Test("the shipped configs parse")
    func shippedConfigsParse() throws {
        let text = try #require(ConfigTestFiles.read("Config/loopd.toml"))
        let root = try TOMLParser.parse(text)
        #expect(root.keys == ["server", "limits", "quotas", "journal", "exec", "workers", "actions"])
        #expect(root["workers"]?.array?.count == 2)
        let production = try TOMLParser.parse(try #require(ConfigTestFiles.read("Config/loopd.production.toml")))
        #expect(production["workers"]?.array?.count == 3)
    }
}

/// The repository's files, found from this file's path.
enum ConfigTestFiles {
    static func read(_ relativePath: String) -> String? {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/TOMLTests/TOMLParserTests.swift
        let path = parts.joined(separator: "/") + "/" + relativePath
        return try? String(contentsOfFile: path, encoding: .utf8)
    }
}
