import LoopPlatform

/// What a command may touch of its process: the environment, its two
/// output streams (and whether the first is a terminal) and the wall
/// clock. Commands take it as a parameter so
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
    /// Whether standard output is the process's own fd 1 and a terminal:
    /// only then may a command take the terminal over (`top`'s full-screen
    /// view). False for every context but the real process's.
    public var standardOutputIsTerminal: Bool
    /// Whether a write to standard output has failed, as when its reader
    /// has gone (`loopctl top | head`: SwiftNIO ignores SIGPIPE in the whole
    /// process, so that write does not end it), so a command that writes
    /// until it is stopped (`top`'s plain frames) stops. Always false for a
    /// context that cannot tell.
    public var standardOutputFailed: () -> Bool

    /// Creates a context from its seams; the clock is the real one unless
    /// given, and standard output is not a terminal unless said.
    public init(environment: @escaping (String) -> String?, standardOutput: @escaping (String) -> Void,
                standardError: @escaping (String) -> Void,
                currentTimeUnixMs: (() -> Int64)? = nil, standardOutputIsTerminal: Bool = false,
                standardOutputFailed: @escaping () -> Bool = { false }) {
        self.environment = environment
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.currentTimeUnixMs = currentTimeUnixMs ?? unixMilliseconds
        self.standardOutputIsTerminal = standardOutputIsTerminal
        self.standardOutputFailed = standardOutputFailed
    }

    /// The real process: its environment, fd 1 and fd 2.
    public static var process: CommandContext {
        let output = WriteOutcome()
        return CommandContext(
            environment: environmentVariable,
            standardOutput: { if !writeStandard(1, $0) { output.failed = true } },
            standardError: { writeStandard(2, $0) },
            standardOutputIsTerminal: Terminal.isTerminal(1),
            standardOutputFailed: { output.failed })
    }
}

/// Whether a write to one of the process's streams has failed. The thread
/// that runs the command only, as the context itself.
private final class WriteOutcome {
    var failed = false
}
