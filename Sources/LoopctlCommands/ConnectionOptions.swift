import ArgumentParser
import LoopdClient

/// The options every subcommand takes: where the daemon is, whom it must
/// run as, and how to print.
public struct ConnectionOptions: ParsableArguments {
    /// `--socket PATH`.
    @Option(name: .long, help: ArgumentHelp(
        "The daemon's Unix socket.",
        discussion: """
            Default: $LOOPD_SOCKET, else /run/loopd.sock. A loopd.sock in the \
            current directory (make run's) is used only when named: --socket ./loopd.sock.
            """,
        valueName: "path"))
    public var socket: String?

    /// `--server-uid N|any`.
    @Option(name: .customLong("server-uid"), help: ArgumentHelp(
        "The uid that must have made the daemon's socket listen, or 'any'.",
        discussion: """
            Checked before anything is sent; a mismatch exits 9. Default: \
            $LOOPD_SERVER_UID, else 0 at /run/loopd.sock and no check at other paths.
            """,
        valueName: "uid|any"))
    public var serverUID: ServerUIDOption?

    /// `--json`: print the daemon's reply line as it is.
    @Flag(name: .long, help: "Print the daemon's raw JSON reply (one line) instead of human output.")
    public var json = false

    /// Creates the options with their defaults.
    public init() {}

    /// The socket path to use, by precedence: `--socket`, then `LOOPD_SOCKET`,
    /// then `/run/loopd.sock`.
    public func socketPath(in context: CommandContext) -> String {
        SocketPath.resolve(flag: socket, environment: context.environment)
    }

    /// The uid check to make, by precedence: `--server-uid`, then a
    /// non-empty `LOOPD_SERVER_UID`; nil for the default (uid 0 at
    /// `/run/loopd.sock` only). A variable that holds neither a uid nor
    /// `any` is a usage error, as the same value given to the option is.
    public func serverUID(in context: CommandContext) throws(ValidationError) -> ServerUIDOption? {
        if let serverUID { return serverUID }
        guard let value = context.environment(ServerUIDOption.environmentVariable), !value.isEmpty else { return nil }
        guard let parsed = ServerUIDOption(argument: value) else {
            throw ValidationError("\(ServerUIDOption.environmentVariable) must be a uid or 'any', not '\(value)'")
        }
        return parsed
    }
}

/// Where loopctl looks for the daemon: the LoopdClient library's rule
/// (`LoopdClient.defaultSocketPath`) behind `--socket`.
public enum SocketPath {
    /// The variable that names the socket, `LOOPD_SOCKET`.
    public static var environmentVariable: String { LoopdClient.socketEnvironmentVariable }
    /// The installed daemon's socket, `/run/loopd.sock`.
    public static var installed: String { LoopdClient.installedSocketPath }

    /// `flag` if given and not empty, else a non-empty `LOOPD_SOCKET`, else
    /// `/run/loopd.sock`. Never a `./loopd.sock` that merely exists.
    public static func resolve(flag: String?, environment: (String) -> String?) -> String {
        if let flag, !flag.isEmpty { return flag }
        return LoopdClient.defaultSocketPath(environment: environment)
    }
}

/// What `--server-uid` and `LOOPD_SERVER_UID` take: a uid, or `any` for no
/// check.
public enum ServerUIDOption: Sendable, Equatable, ExpressibleByArgument {
    /// The listener must be this uid.
    case uid(UInt32)
    /// No check.
    case any

    /// The environment variable that sets the check when `--server-uid` is not given.
    public static let environmentVariable = "LOOPD_SERVER_UID"

    /// `any`, or a uid in decimal; nil for anything else.
    public init?(argument: String) {
        if argument == "any" {
            self = .any
        } else if let uid = UInt32(argument) {
            self = .uid(uid)
        } else {
            return nil
        }
    }
}

extension LoopdClient.ServerUID {
    /// The library's check for loopctl's option; nil is the library's default.
    init(_ option: ServerUIDOption?) {
        switch option {
        case nil: self = .automatic
        case .uid(let uid)?: self = .uid(uid)
        case .any?: self = .any
        }
    }
}
