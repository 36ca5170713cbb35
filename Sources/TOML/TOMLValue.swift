/// One value of a TOML 1.0 document, as `TOMLParser` reads it: a tree whose
/// tables keep their keys in the order the document defined them.
///
/// Equality compares the tree as written: two NaNs are equal (so a document
/// equals itself), `-0.0` differs from `0.0`, and dates and times compare
/// their spelling too (`T` versus a space, `Z` versus `+00:00`).
public enum TOMLValue: Sendable {
    /// A basic or literal string, single- or multi-line.
    case string(String)
    /// A 64-bit integer, written in decimal, hex, octal or binary.
    case integer(Int64)
    /// A float, `inf` and `nan` included.
    case float(Double)
    /// `true` or `false`.
    case boolean(Bool)
    // The date and time payloads are boxed: inline they would make every
    // value, and every array element, several times larger.
    /// A date and time with its offset from UTC.
    indirect case offsetDateTime(TOMLOffsetDateTime)
    /// A date and time without an offset.
    indirect case localDateTime(TOMLLocalDateTime)
    /// A date alone.
    indirect case localDate(TOMLDate)
    /// A time of day alone.
    indirect case localTime(TOMLTime)
    /// An array (its elements may differ in type).
    case array([TOMLValue])
    /// A table, inline or not.
    case table(TOMLTable)

    /// The string, if this is one.
    public var string: String? {
        if case .string(let s) = self { s } else { nil }
    }

    /// The integer, if this is one.
    public var integer: Int64? {
        if case .integer(let n) = self { n } else { nil }
    }

    /// The boolean, if this is one.
    public var boolean: Bool? {
        if case .boolean(let b) = self { b } else { nil }
    }

    /// The elements, if this is an array.
    public var array: [TOMLValue]? {
        if case .array(let a) = self { a } else { nil }
    }

    /// The table, if this is one.
    public var table: TOMLTable? {
        if case .table(let t) = self { t } else { nil }
    }

    /// What kind of value this is, with its article, for messages: "an integer".
    public var kind: String {
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
    /// Equal as written (see the type's notes on floats and dates).
    public static func == (lhs: TOMLValue, rhs: TOMLValue) -> Bool {
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
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A float value.
    public init(floatLiteral value: Double) { self = .float(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    /// An array value.
    public init(arrayLiteral elements: TOMLValue...) { self = .array(elements) }
    /// A table value, keys in the order written.
    public init(dictionaryLiteral elements: (String, TOMLValue)...) {
        self = .table(TOMLTable(elements))
    }
}
