/// TOMLKit hands strings over as C strings, so a `\u0000` escape would
/// silently cut a value short ("A\u0000B" would arrive as "A"). Before parsing,
/// the loader rewrites NUL escapes inside basic (double-quoted) strings into an
/// escape of a noncharacter of the same length, then rejects any string that
/// contains that noncharacter, naming its key. Literal ('…') strings and
/// comments are left alone because `\u0000` there is just text. Equal lengths
/// keep the line and column of TOML syntax errors exact.
enum NULEscapes {
    /// Noncharacters that never appear in a sensible config; the first one the
    /// text does not already contain becomes the marker.
    private static let candidates: [UInt32] = Array(0xFDD0...0xFDEF)

    /// The rewritten text and the marker standing for NUL, or nil when the text
    /// has no NUL escape at all (the common case: parse the text as it is).
    static func mark(_ text: String) -> (text: String, marker: Character)? {
        guard text.contains("\\u0000") || text.contains("\\U00000000") else { return nil }
        guard let code = candidates.first(where: { c in !text.unicodeScalars.contains { $0.value == c } }),
              let scalar = Unicode.Scalar(code)
        else { return nil }  // every candidate used literally: nothing sane to do, parse unmarked
        let hex = String(code, radix: 16, uppercase: true)
        return (rewrite(Array(text.unicodeScalars), short: "\\u" + hex, long: "\\U0000" + hex), Character(scalar))
    }

    private enum State { case outside, comment, basic, multilineBasic, literal, multilineLiteral }

    private static func rewrite(_ s: [Unicode.Scalar], short: String, long: String) -> String {
        var out = String.UnicodeScalarView()
        var state = State.outside
        var i = 0
        func run(of quote: Unicode.Scalar, at j: Int) -> Int {
            var n = 0
            while j + n < s.count && s[j + n] == quote { n += 1 }
            return n
        }
        func matches(_ literal: String, at j: Int) -> Bool {
            let want = Array(literal.unicodeScalars)
            return j + want.count <= s.count && Array(s[j..<j + want.count]) == want
        }
        while i < s.count {
            let c = s[i]
            switch state {
            case .outside:
                if c == "#" {
                    state = .comment
                } else if c == "\"" || c == "'" {
                    let triple = run(of: c, at: i) >= 3
                    state = c == "\"" ? (triple ? .multilineBasic : .basic) : (triple ? .multilineLiteral : .literal)
                    if triple {
                        out.append(contentsOf: s[i..<i + 3])
                        i += 3
                        continue
                    }
                }
            case .comment:
                if c == "\n" { state = .outside }
            case .basic, .multilineBasic:
                if c == "\\" {
                    if matches("\\u0000", at: i) {
                        out.append(contentsOf: short.unicodeScalars)
                        i += 6
                    } else if matches("\\U00000000", at: i) {
                        out.append(contentsOf: long.unicodeScalars)
                        i += 10
                    } else {
                        // Any other escape, including \\ and \", is copied whole
                        // so its second character is never read as a delimiter.
                        out.append(contentsOf: s[i..<min(i + 2, s.count)])
                        i += 2
                    }
                    continue
                }
                if c == "\"" {
                    if state == .basic {
                        state = .outside
                    } else if run(of: c, at: i) >= 3 {
                        // A multi-line string may end with up to five quotes:
                        // the first two belong to the content.
                        let n = min(run(of: c, at: i), 5)
                        out.append(contentsOf: s[i..<i + n])
                        i += n
                        state = .outside
                        continue
                    }
                }
            case .literal:
                if c == "'" { state = .outside }
            case .multilineLiteral:
                if c == "'" && run(of: c, at: i) >= 3 {
                    let n = min(run(of: c, at: i), 5)
                    out.append(contentsOf: s[i..<i + n])
                    i += n
                    state = .outside
                    continue
                }
            }
            out.append(c)
            i += 1
        }
        return String(out)
    }
}
