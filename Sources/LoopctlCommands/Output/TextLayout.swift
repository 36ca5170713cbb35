import LoopdProtocol

/// The few shapes loopctl prints: aligned key/value lines and tables.
enum TextLayout {
    /// `key  value` lines with the values in one column.
    static func pairs(_ rows: [(String, String)]) -> String {
        let width = rows.map { $0.0.count }.max() ?? 0
        var out = ""
        for (key, value) in rows {
            out += pad(key, to: width) + "  " + value + "\n"
        }
        return out
    }

    /// Column alignment in a table.
    enum Alignment { case left, right }

    /// A table with a header row; columns two spaces apart, no trailing blanks.
    static func table(header: [String], alignments: [Alignment], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in all {
            var line = ""
            for (column, cell) in row.enumerated() {
                if column > 0 { line += "  " }
                let last = column == row.count - 1
                switch alignments[column] {
                case .left: line += last ? cell : pad(cell, to: widths[column])
                case .right: line += String(repeating: " ", count: widths[column] - cell.count) + cell
                }
            }
            out += line + "\n"
        }
        return out
    }

    /// A JSON value as a person reads it: strings bare, booleans yes/no,
    /// null as "-", an error object as "code: message", the rest compact JSON.
    static func display(_ value: JSON) -> String {
        switch value {
        case .null: return "-"
        case .bool(let b): return b ? "yes" : "no"
        case .string(let s): return s
        case .integer(let n): return String(n)
        case .object where value["code"]?.stringValue != nil && value["message"]?.stringValue != nil:
            return "\(value["code"]?.stringValue ?? ""): \(value["message"]?.stringValue ?? "")"
        default: return value.serialized()
        }
    }

    /// A duration as a person reads it, at most four significant figures:
    /// `340ms`, `12.3s`, `4m05s`, `2h03m`.
    static func duration(milliseconds ms: Int64) -> String {
        if ms < 1000 { return "\(ms)ms" }
        if ms < 60_000 { return "\(ms / 1000).\(ms % 1000 / 100)s" }
        if ms < 3_600_000 { return "\(ms / 60_000)m" + twoDigits(ms / 1000 % 60) + "s" }
        return "\(ms / 3_600_000)h" + twoDigits(ms / 60_000 % 60) + "m"
    }

    /// A CPU time as a person reads it: microseconds below a millisecond
    /// (`850us`), else as `duration(milliseconds:)` (`340ms`, `12.3s`).
    static func duration(microseconds us: Int64) -> String {
        us < 1000 ? "\(us)us" : duration(milliseconds: us / 1000)
    }

    /// A size in bytes as a person reads it, in binary units with one
    /// decimal, rounded down: `512 B`, `1.5 KiB`, `12.3 MiB`, `2.0 GiB`.
    static func bytes(_ n: Int64) -> String {
        if n < 1024 { return "\(n) B" }
        let names = ["KiB", "MiB", "GiB", "TiB"]
        var unit: Int64 = 1024, index = 0
        while index < names.count - 1 && n / unit >= 1024 {
            unit *= 1024
            index += 1
        }
        let tenths = n / unit * 10 + n % unit * 10 / unit
        return "\(tenths / 10).\(tenths % 10) \(names[index])"
    }

    private static func twoDigits(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static func pad(_ s: String, to width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }
}
