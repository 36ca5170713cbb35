import ArgumentParser
import LoopdClient

/// `loopctl mode WORKER MODE`: switch the mode a worker's loop runs in.
public struct ModeCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "mode",
        abstract: "Switch a worker's run mode.",
        discussion: """
            While a worker runs in a mode, only jobs submitted for that mode (or \
            for common) proceed; the others are held, not dropped, until it runs \
            a mode that admits them.
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// The worker to switch.
    @Argument(help: "The worker's name.")
    public var worker: String

    /// The mode to run it in.
    @Argument(help: "The mode to run it in (for example: default, maintenance).")
    public var mode: String

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "mode"), ("worker", .string(worker)), ("mode", .string(mode))] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refusedUnlessAdministrator(reply, may: "switch a worker's mode") }
        let now = reply.json["mode"]?.stringValue ?? mode
        let previous = reply.json["previous"]?.stringValue ?? "?"
        return CommandOutput(standardOutput: "\(reply.json["worker"]?.stringValue ?? worker): \(previous) -> \(now)\n")
    }
}
