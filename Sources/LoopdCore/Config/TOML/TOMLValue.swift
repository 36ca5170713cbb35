/// One value of a TOML 1.0 document, as `TOMLParser` reads it: a tree whose
/// tables keep their keys in the order the document defined them.
///
/// Equality compares the tree as written: two NaNs are equal (so a document
/// equals itself), `-0.0` differs from `0.0`, and dates and times compare
/// their spelling too (`T` versus a space, `Z` versus `+00:00`).
enum TOMLValue: Sendable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    // The date and time payloads are boxed: inline they would make every
    // value, and every array element, several times larger.
    indirect case offsetDateTime(TOMLOffsetDateTime)
    indirect case localDateTime(TOMLLocalDateTime)
    indirect case localDate(TOMLDate)
    indirect case localTime(TOMLTime)
    case array([TOMLValue])
    case table(TOMLTable)

    var string: String? {
        if case .string(let s) = self { s } else { nil }
    }

    var integer: Int64? {
        if case .integer(let n) = self { n } else { nil }
    }

    var boolean: Bool? {
        if case .boolean(let b) = self { b } else { nil }
    }

    var array: [TOMLValue]? {
        if case .array(let a) = self { a } else { nil }
    }

    var table: TOMLTable? {
        if case .table(let t) = self { t } else { nil }
    }

    /// What kind of value this is, with its article, for messages: "an integer".
    var kind: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .offsetDateTime: "an offset date-time"
        case .localDateTime: "a local date-time"
        case .localDate: "a local date"
        case .localTime: "a local time"
        case .array: "an array"
        case .table: "a table"
        }
    }
}

extension TOMLValue: Equatable {
    static func == (lhs: TOMLValue, rhs: TOMLValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a == b
        case (.integer(let a), .integer(let b)): a == b
        case (.float(let a), .float(let b)): (a.isNaN && b.isNaN) || (a == b && a.sign == b.sign)
        case (.boolean(let a), .boolean(let b)): a == b
        case (.offsetDateTime(let a), .offsetDateTime(let b)): a == b
        case (.localDateTime(let a), .localDateTime(let b)): a == b
        case (.localDate(let a), .localDate(let b)): a == b
        case (.localTime(let a), .localTime(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.table(let a), .table(let b)): a == b
        default: false
        }
    }
}

// Literals make expected trees in tests read like the TOML they stand for:
// `["name": "w1", "ports": [1, 2]]`.
extension TOMLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(floatLiteral value: Double) { self = .float(value) }
    init(booleanLiteral value: Bool) { self = .boolean(value) }
    init(arrayLiteral elements: TOMLValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, TOMLValue)...) {
        self = .table(TOMLTable(elements))
    }
}
