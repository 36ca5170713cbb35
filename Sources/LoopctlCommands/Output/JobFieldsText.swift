import LoopdProtocol

/// A job's fields as `status` shows them: in the reply's order, the times,
/// durations and an exec job's usage under names and in units a person
/// reads, everything else as it came.
enum JobFieldsText {
    /// What a member is shown as, for the members that are not shown as
    /// they came.
    private static let labels: [String: String] = [
        "submitted_at": "submitted", "started_at": "started", "finished_at": "finished",
        "queue_ms": "queue time", "run_ms": "run time", "cancelled_by": "cancelled by",
        "run_priority": "runs at priority", "expires_at": "expires",
        "last_error": "last error", "unique_key": "unique key",
    ]

    /// Every member of `reply` but `id` and `ok`, as aligned pairs.
    static func pairs(of reply: JSON) -> String {
        guard case .object(let members) = reply else { return "" }
        var rows: [(String, String)] = []
        for (key, value) in members where key != "id" && key != "ok" {
            if key == "attempt", case .integer(let n) = value, case .integer(let retries)? = reply["retries"] {
                rows.append((key, "\(n) of \(retries + 1)"))
            } else if key == "usage", let usage = usageRows(value) {
                rows += usage
            } else if key != "retries" || reply["attempt"] == nil {
                rows.append((labels[key] ?? key, display(key, value)))
            }
        }
        return TextLayout.pairs(rows)
    }

    private static func display(_ key: String, _ value: JSON) -> String {
        switch (key, value) {
        case ("queue_ms", .integer(let ms)), ("run_ms", .integer(let ms)): TextLayout.duration(milliseconds: ms)
        case ("cancelled_by", .integer(let uid)): "uid \(uid)"
        case ("last_error", _): errorText(value)
        case ("attempts", .array(let attempts)):
            attempts.map { "#\(TextLayout.display($0["attempt"] ?? .null)) \(errorText($0))" }.joined(separator: "; ")
        default: TextLayout.display(value)
        }
    }

    /// An exec job's `usage` as three rows: its CPU time, user and system;
    /// its peak memory ("-" when the daemon could not tell); and what
    /// counted them (`cgroup` or `rusage`). Nil for an object without the
    /// CPU times, which is then shown as it came.
    private static func usageRows(_ usage: JSON) -> [(String, String)]? {
        guard case .integer(let user)? = usage["cpu_user_usec"], case .integer(let system)? = usage["cpu_system_usec"] else {
            return nil
        }
        let cpu = TextLayout.duration(microseconds: user) + " user, " + TextLayout.duration(microseconds: system) + " system"
        let peak = usage["memory_peak_bytes"]?.integerValue.map(TextLayout.bytes) ?? "-"
        return [
            ("cpu time", cpu),
            ("peak memory", peak),
            ("counted by", usage["source"]?.stringValue ?? "-"),
        ]
    }

    /// `code: message` of an error object.
    private static func errorText(_ error: JSON) -> String {
        "\(error["code"]?.stringValue ?? "?"): \(error["message"]?.stringValue ?? "")"
    }
}
