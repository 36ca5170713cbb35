import ArgumentParser
import LoopdClient

/// `loopctl inspect WORKER`: the worker loop's CFRunLoop-style description.
public struct InspectCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a worker loop's description: modes, sources, timers, observers.")

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// The worker to describe.
    @Argument(help: "The worker's name.")
    public var worker: String

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "inspect"), ("worker", .string(worker))] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        let description = try reply.requiredString("description")
        return CommandOutput(standardOutput: description.hasSuffix("\n") ? description : description + "\n")
    }
}
