import ArgumentParser
import LoopdClient

/// `loopctl cancel JOB`: cancel a job, queued or running.
public struct CancelCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a job: one that has not started, or one that is running.",
        discussion: """
            A running job is stopped, and loopctl returns once it has ended. \
            Exits 5 when the job was not cancelled (it had already ended, or \
            ended on its own first) or the daemon refused.
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// The job to cancel.
    @Argument(help: "The job id that submit printed.")
    public var job: String

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "cancel"), ("job", .string(job))] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        guard let cancelled = reply.json["cancelled"]?.boolValue else {
            throw .protocol("cancel reply lacks the boolean \"cancelled\": \(reply.line)")
        }
        let state = reply.json["state"]?.stringValue ?? "unknown"
        if cancelled {
            let stopped = reply.json["started"]?.boolValue == true ? " (it was running: stopped)" : ""
            return CommandOutput(standardOutput: "cancelled \(job)\(stopped)\n")
        }
        // Not cancelling is a refusal for a script that counted on it.
        return CommandOutput(diagnostic: "loopctl: job \(job) was not cancelled: it is \(state)", status: .refused)
    }
}
