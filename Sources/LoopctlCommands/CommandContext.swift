/// What a command may touch of its process: the environment, the file
/// system's "does this exist", and its two output streams. Commands take it
/// as a parameter so tests can run them in-process with a fake environment
/// and captured output.
public struct CommandContext {
    /// Reads an environment variable.
    public var environment: (String) -> String?
    /// Whether something exists at a path (used to pick the default socket).
    public var fileExists: (String) -> Bool
    /// Writes text, verbatim, to standard output.
    public var standardOutput: (String) -> Void
    /// Writes text, verbatim, to standard error.
    public var standardError: (String) -> Void

    /// Creates a context from its four seams.
    public init(environment: @escaping (String) -> String?, fileExists: @escaping (String) -> Bool,
                standardOutput: @escaping (String) -> Void, standardError: @escaping (String) -> Void) {
        self.environment = environment
        self.fileExists = fileExists
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// The real process: its environment, file system, fd 1 and fd 2.
    public static var process: CommandContext {
        CommandContext(
            environment: UnixSocket.environment,
            fileExists: UnixSocket.fileExists,
            standardOutput: { UnixSocket.writeStandard(1, $0) },
            standardError: { UnixSocket.writeStandard(2, $0) })
    }
}
