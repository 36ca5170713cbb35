import ArgumentParser
import LoopdProtocol

/// A subcommand that is one request and one reply: it builds the request
/// from its arguments and turns the reply into output and an exit status.
/// Connecting, sending, `--json` and the failure exit codes are shared, so
/// every subcommand behaves the same way.
public protocol ClientCommand: ParsableCommand {
    /// `--socket` and `--json`.
    var connection: ConnectionOptions { get }
    /// The request's members after `id`, starting with `op`.
    var requestFields: [(String, JSON)] { get }
    /// What to print for `reply`, and the exit status. Throws
    /// `ClientError.protocol` when an `ok` reply lacks a field it must have.
    func render(_ reply: Reply) throws(ClientError) -> CommandOutput
}

extension ClientCommand {
    /// Runs the command against the real process.
    public func run() throws {
        let status = perform(in: .process)
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// Connects, sends the request, waits for its reply and prints it.
    public func perform(in context: CommandContext) -> ExitStatus {
        let path = connection.socketPath(in: context)
        let output: CommandOutput
        do {
            let client = try LoopdClient(path: path)
            defer { client.close() }
            let reply = try client.call(requestFields)
            output = connection.json ? try render(reply).json(reply) : try render(reply)
        } catch {
            var message = "loopctl: \(error.description)\n"
            if case .cannotConnect = error {
                message += "loopctl: is loopd running? Point at its socket with --socket or \(SocketPath.environmentVariable).\n"
            }
            context.standardError(message)
            return ExitStatus(error)
        }
        output.write(to: context)
        return output.status
    }
}

/// What a command prints and how it exits.
public struct CommandOutput: Sendable, Equatable {
    /// Text for stdout.
    public var standardOutput = ""
    /// Text for stderr that is part of the result (an exec job's stderr).
    public var standardError = ""
    /// One line saying why the status is not 0 ("loopctl: job j1 failed: …"),
    /// printed on stderr in human and `--json` mode alike.
    public var diagnostic: String?
    /// The exit status.
    public var status: ExitStatus = .ok

    /// Creates an output.
    public init(standardOutput: String = "", standardError: String = "", diagnostic: String? = nil, status: ExitStatus = .ok) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.diagnostic = diagnostic
        self.status = status
    }

    /// The generic answer to an `ok:false` reply: its code and message on
    /// stderr, exit status 1.
    public static func refused(_ reply: Reply) -> CommandOutput {
        CommandOutput(diagnostic: "loopctl: \(reply.errorCode ?? "error"): \(reply.errorMessage)", status: .failed)
    }

    /// The `--json` form: the reply line as it came, with the same status
    /// and diagnostic, so scripts get both the data and the exit code.
    func json(_ reply: Reply) -> CommandOutput {
        CommandOutput(standardOutput: reply.line + "\n", diagnostic: diagnostic, status: status)
    }

    /// Prints to the context's streams.
    public func write(to context: CommandContext) {
        if !standardOutput.isEmpty { context.standardOutput(standardOutput) }
        if !standardError.isEmpty { context.standardError(standardError) }
        if let diagnostic { context.standardError(diagnostic + "\n") }
    }
}
