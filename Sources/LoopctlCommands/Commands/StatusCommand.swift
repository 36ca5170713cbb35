import ArgumentParser
import LoopdClient

/// `loopctl status JOB`: a job's state, times and result.
public struct StatusCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a job's state, worker, action, times and result.",
        discussion: """
            Times are UTC (RFC 3339); the queue time and run time appear once the \
            job has started and ended. Exits 0 whenever the daemon knows the job, \
            whatever its state; 5 when it refuses (an unknown job, another user's job).
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// The job id `submit` returned.
    @Argument(help: "The job id that submit printed.")
    public var job: String

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "status"), ("job", .string(job))] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        _ = try reply.requiredString("state")
        return CommandOutput(standardOutput: JobFieldsText.pairs(of: reply.json))
    }
}
