import LoopPlatform
import TOML

/// Reads loopd's TOML configuration and validates every setting, so that a
/// `DaemonConfig` it returns is always usable as it is. Anything doubtful —
/// an unknown key, a wrong type, a number out of range, a name that does not
/// resolve — is an error naming the file and the key path; nothing is
/// silently ignored or clamped.
///
/// The schema, with every default, is documented in `Config/loopd.toml`.
public enum ConfigLoader {
    /// The configuration used when loopd runs from a checkout (relative to the working directory).
    public static let checkoutPath = "Config/loopd.toml"
    /// Where a package installs the configuration.
    public static let installedPath = "/etc/loopd/loopd.toml"

    /// The file loopd reads when no `--config` is given: the checkout's
    /// `Config/loopd.toml` if the working directory has one, else the
    /// installed path (whose absence `load` then reports).
    public static func defaultPath() -> String {
        FileSystem.isReadable(checkoutPath) ? checkoutPath : installedPath
    }

    /// A config is a few kilobytes; anything over this is a wrong path, not a config.
    static let maxFileBytes = 1 << 20

    /// Reads and validates the file at `path`; errors name `path` as their origin.
    public static func load(path: String) throws(ConfigError) -> DaemonConfig {
        switch FileSystem.readFile(path, limit: maxFileBytes) {
        case .failure(.errno(let code)):
            throw .unreadable(origin: path, reason: errnoText(code))
        case .failure(.tooLarge):
            throw .unreadable(origin: path, reason: "larger than \(maxFileBytes) bytes")
        case .success(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .unreadable(origin: path, reason: "not valid UTF-8")
            }
            return try parse(text, origin: path)
        }
    }

    /// Validates TOML `text`; `origin` labels the errors (a path, or "<test>").
    public static func parse(_ text: String, origin: String) throws(ConfigError) -> DaemonConfig {
        // The parser refuses a raw NUL byte itself ("a raw NUL byte is not
        // allowed in TOML"); a `\u0000` escape reaches the readers as a real
        // NUL, which every string and name reader refuses by key.
        let root: TOMLTable
        do {
            root = try TOMLParser.parse(text)
        } catch {
            throw .syntax(origin: origin, line: error.line, column: error.column, message: error.message)
        }
        return try read(ConfigTable(table: root, path: "", origin: origin))
    }

    /// The top level: which tables exist, then each in turn.
    static func read(_ root: ConfigTable) throws(ConfigError) -> DaemonConfig {
        try root.rejectUnknownKeys(allowed: ["server", "limits", "journal", "exec", "workers", "actions", "quotas", "schedules", "fleet"])
        var config = DaemonConfig()
        if let server = try root.table("server") { config.server = try readServer(server) }
        if let limits = try root.table("limits") { config.limits = try readLimits(limits) }
        if let journal = try root.table("journal") { config.journal = try readJournal(journal) }
        if let exec = try root.table("exec") { config.exec = try readExecDefaults(exec) }
        config.workers = try readWorkers(root)
        if let quotas = try root.table("quotas") { config.quotas = try readQuotas(quotas) }
        if let actions = try root.table("actions") { config.actions = try readActions(actions) }
        if let schedules = try root.table("schedules") { config.schedules = try readSchedules(schedules, config) }
        if let fleet = try root.table("fleet") { config.fleet = try readFleet(fleet) }
        return config
    }
}
