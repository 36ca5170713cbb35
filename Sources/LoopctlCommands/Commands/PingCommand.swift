import ArgumentParser
import LoopdClient

/// `loopctl ping`: is the daemon there?
public struct PingCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Check that the daemon answers; print its version and pid.")

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "ping")] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        let version = reply.json["version"]?.stringValue ?? "?"
        let pid = reply.json["pid"]?.integerValue.map(String.init) ?? "?"
        return CommandOutput(standardOutput: "loopd \(version) is up (pid \(pid))\n")
    }
}
