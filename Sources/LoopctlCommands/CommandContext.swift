import LoopPlatform

/// What a command may touch of its process: the environment, its two
/// output streams and the wall clock. Commands take it as a parameter so
/// tests can run them in-process with a fake environment, captured output
/// and a fixed time. (No file system: the socket is never chosen by what
/// happens to exist.)
public struct CommandContext {
    /// Reads an environment variable.
    public var environment: (String) -> String?
    /// Writes text, verbatim, to standard output.
    public var standardOutput: (String) -> Void
    /// Writes text, verbatim, to standard error.
    public var standardError: (String) -> Void
    /// The current time in Unix milliseconds (for times relative to now,
    /// such as `jobs --since 10m`).
    public var currentTimeUnixMs: () -> Int64

    /// Creates a context from its seams; the clock is the real one unless
    /// given.
    public init(environment: @escaping (String) -> String?, standardOutput: @escaping (String) -> Void,
                standardError: @escaping (String) -> Void,
                currentTimeUnixMs: (() -> Int64)? = nil) {
        self.environment = environment
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.currentTimeUnixMs = currentTimeUnixMs ?? unixMilliseconds
    }

    /// The real process: its environment, fd 1 and fd 2.
    public static var process: CommandContext {
        CommandContext(
            environment: environmentVariable,
            standardOutput: { writeStandard(1, $0) },
            standardError: { writeStandard(2, $0) })
    }
}
