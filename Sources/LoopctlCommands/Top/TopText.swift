/// Text as `loopctl top` puts it on a screen: safe to print, and cut to a
/// number of terminal cells.
enum TopText {
    /// `text` with every control character (C0, DEL, C1) as `?`. What the
    /// daemon sends (a job's error message, an action's name) reaches a
    /// terminal; an escape sequence in it must not.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(isControl(scalar) ? "?" : scalar) }
        return String(out)
    }

    /// `text` cut to at most `length` characters, the last of them `…`
    /// when anything was cut.
    static func truncated(_ text: String, to length: Int) -> String {
        text.count <= length ? text : String(text.prefix(max(0, length - 1))) + "…"
    }

    /// The longest start of `text` that takes at most `cells` cells.
    static func clip(_ text: String, toCells cells: Int) -> String {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            used += width(of: text[index])
            if used > cells { return String(text[..<end]) }
            end = text.index(after: index)
        }
        return text
    }

    /// How many cells `text` takes in a terminal.
    static func cells(_ text: String) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// Cells a character takes: two for the wide East Asian and emoji
    /// blocks, one for everything else (a combining mark belongs to the
    /// character before it). An estimate of wcwidth(3) without the locale,
    /// enough that no line runs past the edge and wraps.
    static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first?.value, scalar >= 0x1100 else { return 1 }
        for range in wideRanges where range.contains(scalar) { return 2 }
        return 1
    }

    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
        0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
        0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
    ]

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
