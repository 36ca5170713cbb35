import ArgumentParser
import LoopPlatform
import LoopdClient

/// What `retry` and `discard` share: one job by id, or the ended jobs that
/// match filters (the failures by default), up to a limit.
public struct EndedJobsOptions: ParsableArguments {
    /// The job, for the one-job form.
    @Argument(help: ArgumentHelp("The job's id; without it, every ended job the filters match.", valueName: "job"))
    public var job: String?
    /// `--state`, repeatable: end states only; default: failed, timed_out and expired.
    @Option(name: .customLong("state"), help: ArgumentHelp(
        "Only jobs that ended in this state (repeat for several; default: failed, timed_out, expired).", valueName: "state"))
    public var states: [JobStateArgument] = []
    /// `--worker`.
    @Option(help: ArgumentHelp("Only jobs placed on this worker.", valueName: "name"))
    public var worker: String?
    /// `--action`.
    @Option(help: ArgumentHelp("Only jobs of this action.", valueName: "action"))
    public var action: String?
    /// `--since`.
    @Option(help: ArgumentHelp("Only jobs submitted at or after this time (RFC 3339, or 10m, 2h, 1d ago).", valueName: "time"))
    public var since: SinceArgument?
    /// `--limit`.
    @Option(help: ArgumentHelp("At most this many jobs (1-\(JobsQuery.maxLimit); default \(JobsQuery.defaultLimit)).", valueName: "n"))
    public var limit: Int?

    /// Creates the options with their defaults (ArgumentParser fills in the rest).
    public init() {}

    /// Rejects what the daemon would refuse anyway, as a usage error (exit 2).
    public func validate() throws {
        let filtered = !states.isEmpty || worker != nil || action != nil || since != nil || limit != nil
        if job != nil && filtered { throw ValidationError("Give a job id or filters, not both.") }
        if job == nil && !filtered {
            throw ValidationError("Give a job id, or at least one filter (--state failed, --since 1h, …).")
        }
        if let limit, !(1...JobsQuery.maxLimit).contains(limit) {
            throw ValidationError("--limit must be 1...\(JobsQuery.maxLimit).")
        }
        for s in states where !s.state.isFinal { throw ValidationError("--state \(s.state.rawValue) is not an end state.") }
    }

    /// The request's members after `op`.
    func fields(nowUnixMs: Int64) -> [(String, JSON)] {
        if let job { return [("job", .string(job))] }
        var fields: [(String, JSON)] = []
        var seen: [JobState] = []
        for s in states where !seen.contains(s.state) { seen.append(s.state) }
        if !seen.isEmpty { fields.append(("state", .array(seen.map { .string($0.rawValue) }))) }
        if let worker { fields.append(("worker", .string(worker))) }
        if let action { fields.append(("action", .string(action))) }
        if let since { fields.append(("since", .string(Timestamp.format(unixMilliseconds: since.resolve(nowUnixMs: nowUnixMs))))) }
        if let limit { fields.append(("limit", .integer(Int64(limit)))) }
        return fields
    }
}

/// `loopctl retry JOB` or `loopctl retry --state failed --since 1h`.
public struct RetryCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Run ended jobs again, each as a new job linked to the old one.",
        discussion: """
            The new job has the old one's action, arguments and options, is \
            your submit (checked and counted as one), and shows retry_of; the \
            old one shows retried_as. Only a job's owner, or an administrator, \
            may retry it. One job prints the new job's id; filters print a line \
            per job (old -> new), the refusals on stderr, and exit 5 if any was \
            refused. A failure is kept longer than other ended jobs \
            (limits.retention_failed_*); a durable one can be retried after a restart.
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions
    /// The job or the filters.
    @OptionGroup public var which: EndedJobsOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "retry")] + which.fields(nowUnixMs: unixMilliseconds()) }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        if which.job != nil {
            guard let job = reply.json["job"]?.stringValue else { throw .protocol("retry reply lacks \"job\": \(reply.line)") }
            return CommandOutput(standardOutput: job + "\n")
        }
        guard let retried = reply.json["retried"]?.arrayValue, let refused = reply.json["refused"]?.arrayValue else {
            throw .protocol("retry reply lacks \"retried\" or \"refused\": \(reply.line)")
        }
        var out = retried.map { "\($0["job"]?.stringValue ?? "?") -> \($0["as"]?.stringValue ?? "?")\n" }.joined()
        if retried.isEmpty { out = "no job to retry\n" }
        if reply.json["more"]?.boolValue == true { out += "more jobs match: run it again\n" }
        guard !refused.isEmpty else { return CommandOutput(standardOutput: out) }
        let why = refused.map { r in
            "loopctl: \(r["job"]?.stringValue ?? "?"): \(r["error"]?["code"]?.stringValue ?? "error"): "
                + (r["error"]?["message"]?.stringValue ?? "")
        }
        return CommandOutput(standardOutput: out, diagnostic: why.joined(separator: "\n"), status: .refused)
    }
}

/// `loopctl discard JOB` or `loopctl discard --state failed --action backup`.
public struct DiscardCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "discard",
        abstract: "Forget ended jobs before their retention ends.",
        discussion: """
            status then answers unknown_job for them; a durable one is also \
            dropped from the journal. Only a job's owner, or an administrator, \
            may discard it. Prints each discarded job's id.
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions
    /// The job or the filters.
    @OptionGroup public var which: EndedJobsOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "discard")] + which.fields(nowUnixMs: unixMilliseconds()) }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        if which.job != nil {
            guard let job = reply.json["job"]?.stringValue else { throw .protocol("discard reply lacks \"job\": \(reply.line)") }
            return CommandOutput(standardOutput: job + "\n")
        }
        guard let discarded = reply.json["discarded"]?.arrayValue else {
            throw .protocol("discard reply lacks \"discarded\": \(reply.line)")
        }
        var out = discarded.compactMap(\.stringValue).map { $0 + "\n" }.joined()
        if discarded.isEmpty { out = "no job to discard\n" }
        if reply.json["more"]?.boolValue == true { out += "more jobs match: run it again\n" }
        return CommandOutput(standardOutput: out)
    }
}
