import ArgumentParser
import LoopdClient

/// A subcommand that talks to the daemon: usually one request and one
/// reply, which it builds from its arguments and turns into output and an
/// exit status. Connecting, sending, `--json` and the failure exit codes
/// are shared, so every subcommand behaves the same way.
public protocol ClientCommand: ParsableCommand {
    /// `--socket`, `--server-uid` and `--json`.
    var connection: ConnectionOptions { get }
    /// The request's members after `id`, starting with `op`.
    var requestFields: [(String, JSON)] { get }
    /// How long each reply may take, in milliseconds, before the command
    /// gives up with exit 4; nil (the default) waits as long as the daemon
    /// takes, as a waited job may run for hours.
    var replyTimeoutMs: Int? { get }
    /// What to print for `reply`, and the exit status. Throws
    /// `ClientError.protocol` when an `ok` reply lacks a field it must have.
    func render(_ reply: RawReply) throws(ClientError) -> CommandOutput
    /// The whole conversation on a connected client, and what to print.
    /// The default sends `requestFields` once and renders the reply (or, with
    /// `--json`, prints it as it came); a command of several requests
    /// (`jobs --all`) has its own.
    func converse(with client: LoopdClient.Blocking, in context: CommandContext) throws(ClientError) -> CommandOutput
}

extension ClientCommand {
    /// Every reply is waited for as long as it takes.
    public var replyTimeoutMs: Int? { nil }

    /// Runs the command against the real process.
    public func run() throws {
        let status = perform(in: .process)
        if status != .ok { throw ExitCode(status.code) }
    }

    /// One request, one reply.
    public func converse(with client: LoopdClient.Blocking, in context: CommandContext) throws(ClientError) -> CommandOutput {
        let reply = try client.call(requestFields)
        return connection.json ? try render(reply).json(reply) : try render(reply)
    }

    /// Connects, runs the conversation and prints its output.
    public func perform(in context: CommandContext) -> ExitStatus {
        let output = outcome(in: context)
        output.write(to: context)
        return output.status
    }

    private func outcome(in context: CommandContext) -> CommandOutput {
        let serverUID: ServerUIDOption?
        do {
            serverUID = try connection.serverUID(in: context)
        } catch {
            return CommandOutput(diagnostic: "loopctl: \(error.message)", status: .usage)
        }
        do {
            let client = try LoopdClient.Blocking.connect(
                path: connection.socketPath(in: context), serverUID: serverUID, replyTimeoutMs: replyTimeoutMs)
            // loopctl exits next: requests still in flight get no reply.
            defer { client.closeWithoutWaiting() }
            return try converse(with: client, in: context)
        } catch {
            return .failure(error)
        }
    }
}

/// What a command prints and how it exits.
public struct CommandOutput: Sendable, Equatable {
    /// Text for stdout.
    public var standardOutput = ""
    /// Text for stderr that is part of the result (an exec job's stderr).
    public var standardError = ""
    /// Why the status is not 0 ("loopctl: job j1 failed: …"), printed on
    /// stderr in human and `--json` mode alike.
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
    /// stderr, exit status 5.
    public static func refused(_ reply: RawReply) -> CommandOutput {
        CommandOutput(diagnostic: "loopctl: \(reply.errorCode ?? "error"): \(reply.errorMessage)", status: .refused)
    }

    /// The answer to a refused administrator's request: `forbidden` says
    /// who may (exit 7), any other refusal is `refused(_:)`.
    public static func refusedUnlessAdministrator(_ reply: RawReply, may what: String) -> CommandOutput {
        guard reply.errorCode == ErrorCode.forbidden.rawValue else { return .refused(reply) }
        return CommandOutput(
            diagnostic: "loopctl: forbidden: only an administrator of loopd may \(what) "
                + "(root, loopd's own user, or a user in the config's server.admin_users or server.admin_groups)\n"
                + "loopctl: loopd said: \(reply.errorMessage)",
            status: .notAdministrator)
    }

    /// The answer to a conversation that produced no reply: what went
    /// wrong (and, when nothing listens or the wrong uid does, what to do
    /// about it), exit 3, 4 or 9.
    public static func failure(_ error: ClientError) -> CommandOutput {
        var message = "loopctl: \(error.description)"
        switch error {
        case .cannotConnect:
            message += "\nloopctl: is loopd running? Point at its socket with --socket or \(SocketPath.environmentVariable)."
        case .serverUIDMismatch:
            message += "\nloopctl: to trust that uid there, say so with --server-uid or \(ServerUIDOption.environmentVariable)."
        case .closed, .protocol:
            break
        }
        return CommandOutput(diagnostic: message, status: ExitStatus(error))
    }

    /// The `--json` form: the reply line as it came, with the same status
    /// and diagnostic, so scripts get both the data and the exit code.
    func json(_ reply: RawReply) -> CommandOutput {
        CommandOutput(standardOutput: reply.line + "\n", diagnostic: diagnostic, status: status)
    }

    /// Prints to the context's streams.
    public func write(to context: CommandContext) {
        if !standardOutput.isEmpty { context.standardOutput(standardOutput) }
        if !standardError.isEmpty { context.standardError(standardError) }
        if let diagnostic { context.standardError(diagnostic + "\n") }
    }
}
