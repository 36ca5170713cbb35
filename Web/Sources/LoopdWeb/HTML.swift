/// Markup for a page. Text reaches it only escaped: a template's
/// interpolations of `String`s (and of numbers) are escaped, while an `HTML`
/// value interpolated into another keeps its markup. A job's arguments,
/// output or error message can therefore never become markup.
public struct HTML: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    public private(set) var markup: String

    /// Markup taken as it is: for this module's own constants only.
    init(trusted markup: String) { self.markup = markup }

    public init(stringLiteral value: String) { markup = value }

    public init(stringInterpolation: Interpolation) { markup = stringInterpolation.markup }

    public var description: String { markup }

    public struct Interpolation: StringInterpolationProtocol {
        var markup = ""
        public init(literalCapacity: Int, interpolationCount: Int) { markup.reserveCapacity(literalCapacity * 2) }
        public mutating func appendLiteral(_ literal: String) { markup += literal }
        public mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }
        public mutating func appendInterpolation(_ text: Substring) { markup += HTML.escape(String(text)) }
        public mutating func appendInterpolation(_ html: HTML) { markup += html.markup }
        public mutating func appendInterpolation(_ parts: [HTML]) { for p in parts { markup += p.markup } }
        public mutating func appendInterpolation(_ number: some BinaryInteger) { markup += String(number) }
    }

    /// `text` with the five characters that are markup in text and in
    /// quoted attribute values replaced by references.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A digest of the markup (64-bit FNV-1a, hexadecimal): the live stream
    /// compares renders by it, starting from the one the page was sent with.
    var digest: String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in markup.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        return String(h, radix: 16)
    }

    /// The parts one after the other.
    static func joined(_ parts: [HTML], separator: HTML = "") -> HTML {
        HTML(trusted: parts.map(\.markup).joined(separator: separator.markup))
    }
}

/// A query string's component, percent-encoded (RFC 3986 unreserved characters kept).
func percentEncoded(_ s: String) -> String {
    var out = ""
    for b in s.utf8 {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(b))
        default:
            let hex = Array("0123456789ABCDEF".utf8)
            out += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
        }
    }
    return out
}

/// `?a=1&b=2` from the pairs whose value is not empty; "" when none is.
func queryString(_ pairs: [(String, String?)]) -> String {
    let kept = pairs.compactMap { k, v in v.flatMap { $0.isEmpty ? nil : "\(k)=\(percentEncoded($0))" } }
    return kept.isEmpty ? "" : "?" + kept.joined(separator: "&")
}
