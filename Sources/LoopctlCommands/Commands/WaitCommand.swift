import ArgumentParser
import LoopdClient

/// `loopctl wait JOB [--timeout MS]`: wait for a job to end and report it
/// as a waited `submit` would.
public struct WaitCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait for a job to end; print its result as submit does.",
        discussion: """
            For a job submitted with --no-wait (or by someone else): loopctl \
            waits until it has ended, prints its result the way submit does and \
            exits with the code that tells how it ended. With --timeout it \
            gives up after that many milliseconds and exits 6; the job goes on.
            """ + "\n\n" + ExitStatus.helpText)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// The job to wait for.
    @Argument(help: "The job id that submit printed.")
    public var job: String

    /// `--timeout`: stop waiting (not the job) after this many milliseconds.
    @Option(help: ArgumentHelp("Stop waiting after this many milliseconds (the job is not touched).", valueName: "ms"))
    public var timeout: Int64?

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// Rejects what the daemon would refuse anyway, as a usage error (exit 2).
    public func validate() throws {
        if let timeout, !(1...RequestLimits.maxWaitMs).contains(timeout) {
            throw ValidationError("--timeout must be 1...\(RequestLimits.maxWaitMs) ms.")
        }
    }

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] {
        var fields: [(String, JSON)] = [("op", "wait"), ("job", .string(job))]
        if let timeout { fields.append(("timeout_ms", .integer(timeout))) }
        return fields
    }

    /// Human output and exit status for `reply`: the job's result and how
    /// it ended, or, when the wait timed out first, exit 6.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        // Refusals (unknown job, forbidden, …) carry no job fields.
        guard reply.ok || reply.json["job"] != nil else { return .refused(reply) }
        let job = reply.json["job"]?.stringValue ?? self.job
        if reply.ok {
            let state = try reply.requiredString("state")
            if let known = JobState(rawValue: state), !known.isFinal {
                let waited = timeout.map { " after \($0) ms" } ?? ""
                return CommandOutput(diagnostic: "loopctl: job \(job) is still \(state)\(waited)", status: .waitTimedOut)
            }
        }
        return FinishedJob.output(reply, job: job)
    }
}
