import ArgumentParser
import LoopdClient

/// `loopctl metrics`: the daemon's metrics in the Prometheus text
/// exposition format, printed as they came (ready for a redirect into
/// node_exporter's textfile directory).
public struct MetricsCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the daemon's metrics in the Prometheus text format.")

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "metrics")] }

    /// The exposition text, verbatim.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        let text = try reply.requiredString("text")
        return CommandOutput(standardOutput: text.isEmpty || text.hasSuffix("\n") ? text : text + "\n")
    }
}
