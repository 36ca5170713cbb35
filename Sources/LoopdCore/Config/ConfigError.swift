/// Why a configuration file was rejected. Every case names the file (`origin`)
/// and, for a bad setting, the full key path (`limits.max_line_bytes`,
/// `workers[1].name`, `actions.date.argv[0]`), so the operator can go straight
/// to the line to fix.
public enum ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read (missing, unreadable, too large, not UTF-8).
    case unreadable(origin: String, reason: String)
    /// The text is not valid TOML; `line` and `column` are 1-based.
    case syntax(origin: String, line: Int, column: Int, message: String)
    /// The TOML is well-formed but the setting at `key` is not acceptable.
    case invalid(origin: String, key: String, message: String)

    /// The file or label the text came from.
    public var origin: String {
        switch self {
        case .unreadable(let origin, _), .syntax(let origin, _, _, _), .invalid(let origin, _, _): origin
        }
    }

    /// The offending key path, for `.invalid`; nil when the file as a whole is at fault.
    public var key: String? {
        switch self {
        case .invalid(_, let key, _): key
        case .unreadable, .syntax: nil
        }
    }

    /// One line for the operator: `loopd.toml: limits.max_line_bytes: must be …, got "abc"`.
    public var description: String {
        switch self {
        case .unreadable(let origin, let reason):
            "\(origin): cannot read configuration: \(reason)"
        case .syntax(let origin, let line, let column, let message):
            "\(origin):\(line):\(column): TOML syntax error: \(message)"
        case .invalid(let origin, let key, let message):
            "\(origin): \(key): \(message)"
        }
    }
}
