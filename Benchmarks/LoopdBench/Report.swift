/// Percentiles, number formatting and the markdown tables.

/// Nearest-rank percentiles of latencies (ns).
struct Percentiles {
    let sorted: [UInt64]

    init(_ samples: [UInt64]) { sorted = samples.sorted() }

    func percentile(_ p: Double) -> UInt64? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// The median (mean of the middle two when even); nil when empty.
func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

enum Format {
    /// `value` with `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "—" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let negative = value < 0
        let n = Int64((abs(value) * scale).rounded())
        let whole = n / Int64(scale)
        var text = String(whole)
        if digits > 0 {
            let frac = String(n % Int64(scale))
            text += "." + String(repeating: "0", count: digits - frac.count) + frac
        }
        return negative ? "-" + text : text
    }

    /// An integer count with thousands separators: "41,230".
    static func count(_ value: Double) -> String {
        guard value.isFinite else { return "—" }
        let digits = Array(String(Int64(value.rounded())))
        var out = ""
        for (k, d) in digits.enumerated() {
            if k > 0 && (digits.count - k) % 3 == 0 && digits[k - 1] != "-" { out += "," }
            out.append(d)
        }
        return out
    }

    /// A latency in ns as µs or ms with about three significant digits.
    static func latency(_ ns: UInt64?) -> String {
        guard let ns else { return "—" }
        let us = Double(ns) / 1000
        if us < 10 { return fixed(us, 2) + " µs" }
        if us < 100 { return fixed(us, 1) + " µs" }
        if us < 1000 { return fixed(us, 0) + " µs" }
        if us < 10_000 { return fixed(us / 1000, 2) + " ms" }
        return fixed(us / 1000, 1) + " ms"
    }

    /// A latency given in ms (redis-benchmark's unit).
    static func latency(ms: Double?) -> String { latency(ms.map { UInt64($0 * 1e6) }) }

    static func percent(_ ratio: Double) -> String { fixed(ratio * 100, 0) + "%" }
}

/// A markdown table padded so it also reads as plain text.
struct MarkdownTable {
    let columns: [String]
    private(set) var rows: [[String]] = []

    init(columns: [String]) { self.columns = columns }

    mutating func add(_ row: [String]) {
        precondition(row.count == columns.count, "row has \(row.count) cells, table has \(columns.count)")
        rows.append(row)
    }

    func render() -> String {
        let widths = columns.indices.map { c in ([columns[c]] + rows.map { $0[c] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { c, cell in
                cell + String(repeating: " ", count: widths[c] - cell.count)
            }.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
        return ([line(columns), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}
