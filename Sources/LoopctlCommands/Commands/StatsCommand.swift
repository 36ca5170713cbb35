import ArgumentParser
import LoopdClient

/// `loopctl stats`: the daemon's counters.
public struct StatsCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show the daemon's counters and job latency.")

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "stats")] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        guard case .object(let members) = reply.json else { throw .protocol("stats reply is not an object") }
        var rows: [(String, String)] = []
        for (key, value) in members where key != "id" && key != "ok" {
            if key == "latency_us" {
                rows.append(("latency", latency(value)))
            } else {
                rows.append((key, TextLayout.display(value)))
            }
        }
        return CommandOutput(standardOutput: TextLayout.pairs(rows))
    }

    private func latency(_ summary: JSON) -> String {
        func field(_ k: String) -> String { summary[k]?.integerValue.map(String.init) ?? "-" }
        return "p50 \(field("p50")) us, p99 \(field("p99")) us, max \(field("max")) us (\(field("count")) jobs)"
    }
}
