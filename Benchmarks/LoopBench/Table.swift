/// The things measured side by side, in the order the tables show them.
enum Subject: String, CaseIterable, Sendable {
    case loopRuntime = "LoopRuntime"
    case dispatch = "Dispatch"
    case nio = "NIO"
    case foundation = "Foundation"
    case raw = "raw"
}

/// A markdown table whose columns are padded so it also reads as plain text.
struct MarkdownTable {
    let title: String
    let columns: [String]
    private(set) var rows: [[String]] = []
    /// Sentences printed under the table (method, units, caveats).
    var notes: [String] = []

    init(title: String, columns: [String]) {
        self.title = title
        self.columns = columns
    }

    /// The standard layout: what | one column per subject | ratio(s) | targets.
    static func subjects(title: String) -> MarkdownTable {
        MarkdownTable(title: title, columns: ["what"] + Subject.allCases.map(\.rawValue) + ["ratio(s)", "targets"])
    }

    mutating func add(_ row: [String]) {
        precondition(row.count == columns.count, "row has \(row.count) cells, table has \(columns.count) columns")
        rows.append(row)
    }

    /// Adds a row in the `subjects` layout; subjects with no value print "—".
    mutating func add(what: String, values: [Subject: String], ratios: String = "", targets: String = "") {
        add([what] + Subject.allCases.map { values[$0] ?? "—" } + [ratios, targets])
    }

    func render() -> String {
        let widths = columns.indices.map { c in
            ([columns[c]] + rows.map { $0[c] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { c, cell in
                cell + String(repeating: " ", count: widths[c] - cell.count)
            }.joined(separator: " | ") + " |"
        }
        var out = ["### \(title)", "", line(columns), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"]
        out += rows.map(line)
        if !notes.isEmpty { out += [""] + notes.map { "- " + $0 } }
        return out.joined(separator: "\n") + "\n"
    }
}

/// One of the benchmark's targets and how this run measured against it.
struct TargetCheck: Sendable {
    let section: String
    let target: String
    let measured: String
    /// nil when a subject it needs did not run.
    let passed: Bool?

    var verdict: String {
        switch passed {
        case .some(true): "PASS"
        case .some(false): "MISS"
        case .none: "n/a"
        }
    }

    /// "target: PASS", for a table's targets column.
    var short: String { "\(target) \(verdict)" }
}

/// Number formatting shared by every table.
enum Format {
    /// Millions of blocks per second: "4.21 M/s".
    static func rate(_ perSecond: Double) -> String { fixed(perSecond / 1e6, 2) + " M/s" }

    /// A duration in microseconds with about three significant digits.
    static func micros(_ nanoseconds: Int64) -> String {
        let us = Double(nanoseconds) / 1000
        let digits = abs(us) < 10 ? 2 : abs(us) < 100 ? 1 : 0
        return fixed(us, digits) + " µs"
    }

    /// A ratio with two decimals: "2.31x".
    static func ratio(_ x: Double) -> String { x.isFinite ? fixed(x, 2) + "x" : "—" }

    /// A fraction as a whole percentage: "48%".
    static func percent(_ x: Double) -> String { x.isFinite ? fixed(x * 100, 0) + "%" : "—" }

    /// Bytes as megabytes (2^20) with two decimals: "0.12 MB".
    static func megabytes(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 2) + " MB" }

    /// `x` with `digits` decimals, without Foundation's String(format:).
    static func fixed(_ x: Double, _ digits: Int) -> String {
        guard x.isFinite else { return "—" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(x) * scale).rounded()
        let whole = Int64(scaled / scale)
        let frac = Int64(scaled - Double(whole) * scale)
        let sign = x < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let f = String(frac)
        return sign + String(whole) + "." + String(repeating: "0", count: digits - f.count) + f
    }
}
