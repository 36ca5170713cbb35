import TOML

/// One TOML table being read, together with where it sits in the file, so
/// that every error it raises names the full key path of the bad setting.
///
/// Each section reader first calls `rejectUnknownKeys(allowed:)`: a typo such
/// as `max_line_byte` must stop the daemon rather than silently leave the
/// default in force.
struct ConfigTable {
    let table: TOMLTable
    /// The path of this table: "" for the root, "limits", "workers[1]", "actions.date".
    let path: String
    /// The file (or "<test>") errors name.
    let origin: String

    /// The full path of `key` inside this table, quoting keys that are not bare TOML keys.
    func keyPath(_ key: String) -> String {
        let segment = ConfigTable.segment(key)
        return path.isEmpty ? segment : "\(path).\(segment)"
    }

    /// The error for a bad value at `key` (or at a sub-path such as `argv[0]`).
    func invalid(_ key: String, _ message: String) -> ConfigError {
        .invalid(origin: origin, key: keyPath(key), message: message)
    }

    /// The error for element `index` of the array at `key` (`argv[0]`).
    func invalid(_ key: String, at index: Int, _ message: String) -> ConfigError {
        .invalid(origin: origin, key: "\(keyPath(key))[\(index)]", message: message)
    }

    func has(_ key: String) -> Bool { table.contains(key: key) }

    /// Fails on the first key (in sorted order, so the message is stable) that
    /// `allowed` does not list, suggesting the allowed key it most resembles.
    func rejectUnknownKeys(allowed: [String], context: String? = nil) throws(ConfigError) {
        for key in table.keys.sorted() where !allowed.contains(key) {
            var message = "unknown key"
            if let context { message += " \(context)" }
            if let near = ConfigTable.nearest(to: key, in: allowed) {
                message += "; did you mean \"\(near)\"?"
            } else {
                message += "; expected one of: \(allowed.joined(separator: ", "))"
            }
            throw invalid(key, message)
        }
    }

    // MARK: Typed getters. Each returns nil when the key is absent.

    /// An integer within `range`; the message states the range, so it doubles as documentation.
    func int(_ key: String, in range: ClosedRange<Int64>) throws(ConfigError) -> Int64? {
        guard let value = table[key] else { return nil }
        guard let n = value.integer, range.contains(n) else {
            throw invalid(key, "must be an integer between \(range.lowerBound) and \(range.upperBound), got \(describe(value))")
        }
        return n
    }

    /// `int(_:in:)` narrowed to `Int`, for the limits stored as `Int`.
    func intValue(_ key: String, in range: ClosedRange<Int64>) throws(ConfigError) -> Int? {
        try int(key, in: range).map { Int($0) }
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let b = value.boolean else {
            throw invalid(key, "must be true or false, got \(describe(value))")
        }
        return b
    }

    /// A string without NUL; `nonEmpty` also rejects "".
    func string(_ key: String, nonEmpty: Bool = true) throws(ConfigError) -> String? {
        guard let value = table[key] else { return nil }
        return try checkedString(value, at: keyPath(key), nonEmpty: nonEmpty)
    }

    /// An array whose elements are all strings without NUL.
    func stringArray(_ key: String) throws(ConfigError) -> [String]? {
        guard let value = table[key] else { return nil }
        guard let array = value.array else {
            throw invalid(key, "must be an array of strings, got \(describe(value))")
        }
        var result: [String] = []
        for (i, element) in array.enumerated() {
            result.append(try checkedString(element, at: "\(keyPath(key))[\(i)]", nonEmpty: false, what: "a string"))
        }
        return result
    }

    /// An array of any element types; callers check each element.
    func array(_ key: String) throws(ConfigError) -> [TOMLValue]? {
        guard let value = table[key] else { return nil }
        guard let array = value.array else {
            throw invalid(key, "must be an array, got \(describe(value))")
        }
        return array
    }

    /// One entry of `allow_users` / `allow_groups`: a numeric id or a name.
    enum AccountEntry: Equatable {
        case id(UInt32)
        case name(String)
    }

    /// Element `index` of the array at `key`, read as an `AccountEntry`.
    func accountEntry(_ value: TOMLValue, at key: String, index: Int) throws(ConfigError) -> AccountEntry {
        let expected = "must be a name or a numeric id between 0 and \(ConfigRanges.accountID.upperBound)"
        switch value {
        case .integer(let n):
            guard ConfigRanges.accountID.contains(n) else {
                throw invalid(key, at: index, "\(expected), got \(describe(value))")
            }
            return .id(UInt32(n))
        case .string:
            return .name(try checkedString(value, at: "\(keyPath(key))[\(index)]", nonEmpty: true))
        default:
            throw invalid(key, at: index, "\(expected), got \(describe(value))")
        }
    }

    /// A sub-table (`[limits]` or `limits = { … }`).
    func table(_ key: String) throws(ConfigError) -> ConfigTable? {
        guard let value = table[key] else { return nil }
        guard let sub = value.table else {
            throw invalid(key, "must be a table, got \(describe(value))")
        }
        return ConfigTable(table: sub, path: keyPath(key), origin: origin)
    }

    /// An array of tables (`[[workers]]`), each reader named `key[i]`.
    func tables(_ key: String) throws(ConfigError) -> [ConfigTable]? {
        guard let value = table[key] else { return nil }
        guard let array = value.array else {
            throw invalid(key, "must be an array of tables ([[\(key)]]), got \(describe(value))")
        }
        var result: [ConfigTable] = []
        for (i, element) in array.enumerated() {
            guard let sub = element.table else {
                throw invalid(key, at: i, "must be a table, got \(describe(element))")
            }
            result.append(ConfigTable(table: sub, path: "\(keyPath(key))[\(i)]", origin: origin))
        }
        return result
    }

    /// Rejects a quoted key that holds a NUL (written as `\u0000`): the key
    /// becomes a name (an action's, an environment variable's) that C cannot carry.
    func checkKeyHasNoNUL(_ key: String) throws(ConfigError) {
        if key.utf8.contains(0) {
            throw invalid(key, "keys must not contain NUL (\\u0000)")
        }
    }

    /// `path` is the full key path, already including any array index.
    private func checkedString(
        _ value: TOMLValue, at path: String, nonEmpty: Bool, what: String = "a string"
    ) throws(ConfigError) -> String {
        func fail(_ message: String) -> ConfigError { .invalid(origin: origin, key: path, message: message) }
        guard let s = value.string else {
            throw fail("must be \(what), got \(describe(value))")
        }
        // `\u0000` is a valid TOML escape, but a NUL cannot pass through
        // argv, the environment or a path.
        if s.utf8.contains(0) {
            throw fail("must not contain NUL (\\u0000)")
        }
        if nonEmpty && s.isEmpty { throw fail("must not be empty") }
        return s
    }

    /// How a bad value is quoted back in a message: scalars as written, containers by kind.
    func describe(_ value: TOMLValue) -> String {
        switch value {
        case .string(let s): ConfigTable.quote(s)
        case .integer(let n): String(n)
        case .float(let x): String(x)
        case .boolean(let b): String(b)
        case .table, .array: value.kind
        case .offsetDateTime(let d): "\(value.kind) (\(d))"
        case .localDateTime(let d): "\(value.kind) (\(d))"
        case .localDate(let d): "\(value.kind) (\(d))"
        case .localTime(let t): "\(value.kind) (\(t))"
        }
    }

    /// A string shown the way TOML would spell it, shortened past 80 characters.
    static func quote(_ s: String) -> String {
        let shown = s.count > 80 ? String(s.prefix(80)) + "…" : s
        var out = "\""
        for scalar in shown.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16, uppercase: true)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A key as it appears in a path: bare when TOML allows it, else quoted.
    static func segment(_ key: String) -> String {
        let bare = !key.isEmpty && key.unicodeScalars.allSatisfy { s in
            s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "_" || s == "-")
        }
        return bare ? key : quote(key)
    }

    /// The allowed key `key` was most likely meant to be: the unique closest
    /// one within edit distance 2, else the unique one it abbreviates or
    /// extends (`timeout` for `timeout_ms`).
    static func nearest(to key: String, in allowed: [String]) -> String? {
        let scored = allowed.map { ($0, editDistance(key, $0)) }.filter { $0.1 <= 2 }
        if let best = scored.map(\.1).min() {
            let winners = scored.filter { $0.1 == best }
            return winners.count == 1 ? winners[0].0 : nil
        }
        guard key.count >= 3 else { return nil }
        let related = allowed.filter { $0.hasPrefix(key) || key.hasPrefix($0) }
        return related.count == 1 ? related[0] : nil
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
