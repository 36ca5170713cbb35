import ArgumentParser
import LoopdClient

/// `loopctl workers`: one line per worker.
public struct WorkersCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "workers",
        abstract: "List the workers: mode, queue depth, running job, loop state.")

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "workers")] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        guard let workers = reply.json["workers"]?.arrayValue else {
            throw .protocol("workers reply lacks the array \"workers\": \(reply.line)")
        }
        let rows = workers.map { w in
            [
                w["name"]?.stringValue ?? "?",
                w["mode"]?.stringValue ?? "?",
                number(w["queued"]),
                number(w["held"]),
                running(w),
                w["running_action"]?.stringValue ?? "-",
                w["running_since"]?.stringValue ?? "-",
                loopState(w),
                number(w["completed"]),
            ]
        }
        let table = TextLayout.table(
            header: ["NAME", "MODE", "QUEUED", "HELD", "RUNNING", "ACTION", "SINCE", "LOOP", "COMPLETED"],
            alignments: [.left, .left, .right, .right, .left, .left, .left, .left, .right],
            rows: rows)
        return CommandOutput(standardOutput: table)
    }

    private func number(_ value: JSON?) -> String { value?.integerValue.map(String.init) ?? "-" }

    /// The running job's id when the daemon shows it (the client's own
    /// job; any job to an administrator); `busy` for a job it does not
    /// show (another user's), whose action and start the next columns
    /// still give; `-` when the worker runs nothing.
    private func running(_ worker: JSON) -> String {
        if let job = worker["running"]?.stringValue { return job }
        return worker["busy"]?.boolValue == true ? "busy" : "-"
    }

    /// "stalled" carries how long the loop has been stuck: that is the
    /// number an operator needs to decide whether to wait or restart.
    private func loopState(_ worker: JSON) -> String {
        let state = worker["loop"]?.stringValue ?? "?"
        if state == "stalled", let ms = worker["stalled_ms"]?.integerValue { return "stalled \(ms)ms" }
        return state
    }
}
