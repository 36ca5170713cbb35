import ArgumentParser

/// The options every subcommand takes: where the daemon is, and how to print.
public struct ConnectionOptions: ParsableArguments {
    /// `--socket PATH`.
    @Option(name: .long, help: ArgumentHelp(
        "The daemon's Unix socket.",
        discussion: "Default: $LOOPD_SOCKET, else ./loopd.sock if it exists, else /run/loopd.sock.",
        valueName: "path"))
    public var socket: String?

    /// `--json`: print the daemon's reply line as it is.
    @Flag(name: .long, help: "Print the daemon's raw JSON reply (one line) instead of human output.")
    public var json = false

    /// Creates the options with their defaults.
    public init() {}

    /// The socket path to use, by precedence: `--socket`, then `LOOPD_SOCKET`,
    /// then the default.
    public func socketPath(in context: CommandContext) -> String {
        SocketPath.resolve(flag: socket, environment: context.environment, fileExists: context.fileExists)
    }
}

/// Where loopctl looks for the daemon.
public enum SocketPath {
    /// The environment variable that names the socket.
    public static let environmentVariable = "LOOPD_SOCKET"
    /// Where `loopd` run from a checkout puts its socket (the default config's
    /// relative `socket`), so the README's two-terminal setup needs no flags.
    public static let workingDirectoryDefault = "./loopd.sock"
    /// Where the systemd units put it (`RuntimeDirectory=loopd`).
    public static let systemDefault = "/run/loopd.sock"

    /// `flag` if given, else a non-empty `LOOPD_SOCKET`, else
    /// `./loopd.sock` when it exists, else `/run/loopd.sock`.
    public static func resolve(flag: String?, environment: (String) -> String?,
                               fileExists: (String) -> Bool) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let env = environment(environmentVariable), !env.isEmpty { return env }
        return fileExists(workingDirectoryDefault) ? workingDirectoryDefault : systemDefault
    }
}
