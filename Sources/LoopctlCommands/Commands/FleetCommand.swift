import ArgumentParser
import LoopdClient

/// `loopctl fleet`: the nodes of the daemon's fleet, one line each.
public struct FleetCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "List the nodes of the daemon's fleet: state, last heartbeat, fleet jobs running, lanes and their modes.",
        discussion: """
            STATE is alive, late (silent past two of its heartbeats), dead (declared by \
            another node after fleet.dead_after_ms of silence) or left (stopped cleanly). \
            A daemon in no fleet, or cut off from the fleet's database, refuses with \
            fleet_unavailable (exit status 5).
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "fleet")] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        guard let nodes = reply.json["nodes"]?.arrayValue else {
            throw .protocol("fleet reply lacks the array \"nodes\": \(reply.line)")
        }
        let this = reply.json["node"]?.stringValue
        let rows = nodes.map { n in
            let name = n["name"]?.stringValue ?? "?"
            return [
                name == this ? "\(name) *" : name,
                n["host"]?.stringValue ?? "?",
                n["state"]?.stringValue ?? "?",
                n["heartbeat_age_ms"]?.integerValue.map { TextLayout.duration(milliseconds: $0) + " ago" } ?? "-",
                n["running"]?.integerValue.map(String.init) ?? "-",
                lanes(n["lanes"]),
                n["version"]?.stringValue ?? "?",
            ]
        }
        var text = TextLayout.table(header: ["NODE", "HOST", "STATE", "HEARTBEAT", "RUNNING", "LANES (MODE)", "VERSION"],
                                    alignments: [.left, .left, .left, .right, .right, .left, .left], rows: rows)
        if let this { text += "* this node (\(this))\n" }
        if let queued = reply.json["queued"]?.integerValue {
            let lag = reply.json["lag_ms"]?.integerValue ?? 0
            text += "fleet jobs queued: \(queued)" + (lag > 0 ? ", the oldest due waiting \(TextLayout.duration(milliseconds: lag))" : "") + "\n"
        }
        return CommandOutput(standardOutput: text)
    }

    /// `w1 (default), w2 (maint)`.
    private func lanes(_ value: JSON?) -> String {
        let lanes = (value?.arrayValue ?? []).map { lane in
            "\(lane["name"]?.stringValue ?? "?") (\(lane["mode"]?.stringValue ?? "?"))"
        }
        return lanes.isEmpty ? "-" : lanes.joined(separator: ", ")
    }
}
