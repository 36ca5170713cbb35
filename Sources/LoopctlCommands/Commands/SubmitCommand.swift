import ArgumentParser
import LoopdClient

/// `loopctl submit [options] ACTION [ARGS...]`: run a job.
public struct SubmitCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Run a job: an action with arguments, on a worker.",
        usage: """
            loopctl submit [--worker <name> | --key <key>] [--no-wait] [--delay <ms>] [--timeout <ms>] \
            [--mode <mode>] [--durable] [--priority <n>] [--expires-in <ms>] [--retries <n>] \
            [--retry-backoff-ms <ms>] [--unique-key <key>] [--socket <path>] [--json] [--] <action> [<args> ...]
            """,
        discussion: """
            Options go before the action: everything after it, dashes included, \
            is the job's arguments (`loopctl submit echo -n hi` sends "-n" and "hi"). \
            A `--` before the action is allowed and ignored.

            By default loopctl waits for the job and prints its result: echo's \
            output, an exec action's stdout (its stderr goes to stderr), nothing \
            for noop; the exit code tells how the job ended (below). With \
            --no-wait it prints the job id at once (`loopctl wait ID` waits \
            for it later).
            """ + "\n\n" + ExitStatus.helpText)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// `--worker`: a worker name, or `any` for the least loaded one.
    @Option(help: ArgumentHelp("Run on this worker (or `any`, the least loaded).", valueName: "name"))
    public var worker: String?

    /// `--key`: the same key always lands on the same worker.
    @Option(help: ArgumentHelp("Place by key: jobs with the same key run on the same worker, in order.", valueName: "key"))
    public var key: String?

    /// `--no-wait`: reply with the job id instead of the result.
    @Flag(name: .customLong("no-wait"), help: "Return at once with the job id instead of waiting for the result.")
    public var noWait = false

    /// `--delay`: start no earlier than this many milliseconds from now.
    @Option(help: ArgumentHelp("Start the job after this many milliseconds.", valueName: "ms"))
    public var delay: Int64?

    /// `--timeout`: stop the job once it has run this many milliseconds.
    @Option(help: ArgumentHelp("Stop the job once it has run this many milliseconds (it ends timed_out, exit 124).", valueName: "ms"))
    public var timeout: Int64?

    /// `--mode`: the worker run mode the job needs.
    @Option(help: ArgumentHelp("Run only while the worker is in this mode (held until then).", valueName: "mode"))
    public var mode: String?

    /// `--durable`: journal the job before it is acknowledged.
    @Flag(help: "Journal the job before it is acknowledged; it survives a daemon crash.")
    public var durable = false

    /// `--priority`: lower starts first among the jobs waiting on its worker.
    @Option(help: ArgumentHelp("Start before waiting jobs of a larger number on the same worker (0-4294967295; default 2147483648).", valueName: "n"))
    public var priority: Int64?

    /// `--expires-in`: give up on the job if it has not started by then.
    @Option(name: .customLong("expires-in"), help: ArgumentHelp("End the job expired (exit 8) if it has not started this many milliseconds after submission.", valueName: "ms"))
    public var expiresIn: Int64?

    /// `--retries`: extra attempts after a failed or timed-out one.
    @Option(help: ArgumentHelp("Run the job up to this many more times if it fails or times out.", valueName: "n"))
    public var retries: Int?

    /// `--retry-backoff-ms`: the base of the exponential backoff between attempts.
    @Option(name: .customLong("retry-backoff-ms"),
            help: ArgumentHelp("Base of the backoff between attempts (doubling, with full jitter).", valueName: "ms"))
    public var retryBackoffMs: Int64?

    /// `--unique-key`: a second submit with this key gets the first job back.
    @Option(name: .customLong("unique-key"),
            help: ArgumentHelp("Idempotency key: while a job of yours with this key is known, submit returns it instead of a new one.",
                               valueName: "key"))
    public var uniqueKey: String?

    /// `--fleet` / `--local`: where the job goes, over the daemon's `fleet.jobs`.
    @Flag(help: ArgumentHelp("Put the job in the daemon's fleet (any node may run it), or keep it on this host; "
                             + "default: the daemon's fleet.jobs."))
    public var place: JobHome?

    /// `--node`: the fleet node that must run it.
    @Option(help: ArgumentHelp("A fleet job only this node may run (implies --fleet).", valueName: "node"))
    public var node: String?

    /// Where `--fleet` and `--local` put a job.
    public enum JobHome: String, EnumerableFlag, Sendable {
        case fleet, local
    }

    /// The action and its arguments, captured verbatim: once the action is
    /// seen, nothing after it is parsed as a loopctl option.
    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp(
        "The action (echo, noop, sleep, fail, or an exec action from the config) and its arguments.",
        valueName: "action"))
    public var command: [String] = []

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The action: the first word after the options (a leading `--` skipped).
    public var action: String { words.first ?? "" }

    /// The job's arguments: every word after the action.
    public var args: [String] { Array(words.dropFirst()) }

    private var words: ArraySlice<String> { command.first == "--" ? command.dropFirst() : command[...] }

    /// Rejects what the daemon would refuse anyway, as a usage error (exit 2).
    public func validate() throws {
        // The passthrough capture swallows the built-in help flag too, when it
        // comes where the action would; there it can only mean help.
        if command.first == "--help" || command.first == "-h" { throw CleanExit.helpRequest(self) }
        if action.isEmpty { throw ValidationError("Missing the action to run (for example: loopctl submit echo hi).") }
        // The passthrough capture starts at the first word it does not know,
        // so a mistyped option would otherwise become the action's name.
        if command.first != "--", action.hasPrefix("-") { throw ValidationError("Unknown option '\(action)'.") }
        if worker != nil && key != nil { throw ValidationError("Give --worker or --key, not both.") }
        if let delay, !(0...RequestLimits.maxDelayMs).contains(delay) {
            throw ValidationError("--delay must be 0...\(RequestLimits.maxDelayMs) ms.")
        }
        if let timeout, !(1...RequestLimits.maxTimeoutMs).contains(timeout) {
            throw ValidationError("--timeout must be 1...\(RequestLimits.maxTimeoutMs) ms.")
        }
        if let priority, !(0...Int64(UInt32.max)).contains(priority) {
            throw ValidationError("--priority must be 0...\(UInt32.max).")
        }
        if let expiresIn, !(1...RequestLimits.maxExpiresInMs).contains(expiresIn) {
            throw ValidationError("--expires-in must be 1...\(RequestLimits.maxExpiresInMs) ms.")
        }
        if let retries, !(0...RequestLimits.maxRetries).contains(retries) {
            throw ValidationError("--retries must be 0...\(RequestLimits.maxRetries).")
        }
        if let retryBackoffMs, !(0...RequestLimits.maxRetryBackoffMs).contains(retryBackoffMs) {
            throw ValidationError("--retry-backoff-ms must be 0...\(RequestLimits.maxRetryBackoffMs) ms.")
        }
        if let uniqueKey, uniqueKey.isEmpty || uniqueKey.utf8.count > RequestLimits.maxUniqueKeyBytes {
            throw ValidationError("--unique-key must be 1...\(RequestLimits.maxUniqueKeyBytes) bytes.")
        }
    }

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] {
        var fields: [(String, JSON)] = [("op", "submit"), ("action", .string(action)), ("args", .array(args.map { .string($0) }))]
        if let worker { fields.append(("worker", .string(worker))) }
        if let key { fields.append(("key", .string(key))) }
        if noWait { fields.append(("wait", false)) }
        if let delay { fields.append(("delay_ms", .integer(delay))) }
        if let timeout { fields.append(("timeout_ms", .integer(timeout))) }
        if let mode { fields.append(("mode", .string(mode))) }
        if durable { fields.append(("durable", true)) }
        if let priority { fields.append(("priority", .integer(priority))) }
        if let expiresIn { fields.append(("expires_in_ms", .integer(expiresIn))) }
        if let retries { fields.append(("retries", .integer(Int64(retries)))) }
        if let retryBackoffMs { fields.append(("retry_backoff_ms", .integer(retryBackoffMs))) }
        if let uniqueKey { fields.append(("unique_key", .string(uniqueKey))) }
        if let node {
            fields += [("fleet", true), ("node", .string(node))]
        } else if let place {
            fields.append(("fleet", .bool(place == .fleet)))
        }
        return fields
    }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        // A reply without a job id is a refusal before any job existed
        // (unknown action, queue full, forbidden, …).
        guard let job = reply.json["job"]?.stringValue else {
            if reply.ok { throw .protocol("submit reply lacks \"job\": \(reply.line)") }
            return .refused(reply)
        }
        if reply.ok && reply.json["result"] == nil {
            // Not waited for (queued, delayed, held): the id is what a script needs.
            return CommandOutput(standardOutput: job + "\n")
        }
        return FinishedJob.output(reply, job: job)
    }
}
