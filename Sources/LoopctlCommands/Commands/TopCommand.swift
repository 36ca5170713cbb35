import ArgumentParser
import LoopdClient

/// `loopctl top`: a live view of the daemon, refreshed every interval,
/// full-screen in a terminal, plain frames elsewhere.
public struct TopCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "A live view: workers, throughput and failures, the longest running jobs, recent failures.",
        discussion: """
            A full-screen view of loopd, read again every --interval seconds \
            (default 1): the daemon's version, uptime (when loopctl can see \
            loopd's process), connections and job counters; throughput (jobs \
            completed per second) and failures (jobs failed or timed out per \
            second) between one reading and the next, each with a sparkline of \
            the last 60; the workers (RUNNING is the job's id, or busy for a job \
            the daemon does not show you: another user's); the running jobs you \
            may see, longest first; and the jobs that failed, timed out or \
            expired, submitted since five minutes before the view started, \
            newest first. What is listed follows the daemon's rules: your own \
            jobs, and every job for an administrator.

            Keys: q or Ctrl-C quits; p pauses and resumes refreshing; s sorts \
            the running jobs by duration, worker or action; w shows one worker \
            at a time (all, then each worker, then all again) in every table; \
            a shows one action at a time in the job lists; ? or h shows the \
            keys. The view follows the terminal's size. The terminal is given \
            back as it was on q, on SIGINT, SIGTERM and SIGHUP, and when the \
            connection is lost, whose reason is printed then.

            When standard output is not a terminal, each reading is printed as \
            plain text (the same sections, no escape sequences), with a blank \
            line between readings. --iterations N stops after N readings in \
            both forms, as top -n does: loopctl top --iterations 1 > now.txt \
            saves one. There is no --json: a live view is not one reply; use \
            loopctl workers --json, loopctl stats --json or loopctl jobs --json.
            """)

    /// `--socket` and `--server-uid`; its `--json` is refused.
    @OptionGroup public var connection: ConnectionOptions

    /// `--interval`: seconds between readings.
    @Option(help: ArgumentHelp("Seconds between readings, 0.1-3600 (fractions allowed).", valueName: "seconds"))
    public var interval: Double = 1

    /// `--iterations`: stop after this many readings.
    @Option(help: ArgumentHelp("Stop after this many readings (as top -n); default: until q.", valueName: "n"))
    public var iterations: Int?

    /// The intervals `--interval` takes, in seconds.
    public static let intervals = 0.1...3600.0

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// `--json`, an interval out of range and fewer than one iteration are
    /// usage errors (exit 2).
    public func validate() throws {
        if connection.json {
            throw ValidationError("""
                top is a live view and has no --json form; for JSON use \
                loopctl workers --json, loopctl stats --json or loopctl jobs --json.
                """)
        }
        guard interval.isFinite, Self.intervals.contains(interval) else {
            throw ValidationError("--interval must be 0.1...3600 seconds.")
        }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1.") }
    }

    /// The first request: `ping`, for the daemon's version. The readings
    /// that follow are `stats`, `workers` and `jobs` (see `TopFetch`).
    public var requestFields: [(String, JSON)] { [("op", "ping")] }

    /// A daemon that does not answer a reading within ten seconds ends the
    /// view (exit 4) instead of freezing it with `q` unread.
    public var replyTimeoutMs: Int? { 10_000 }

    /// The view has no one-reply form (its conversation is `converse`): an
    /// `ok` reply prints nothing, a refusal is printed as any other.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        reply.ok ? CommandOutput() : .refused(reply)
    }

    /// Runs the view on `client`: full-screen when the context's standard
    /// output is a terminal, plain frames otherwise.
    public func converse(with client: LoopdClient.Blocking, in context: CommandContext) throws(ClientError) -> CommandOutput {
        var session: TopSession
        do {
            session = try TopSession(
                client: client, context: context, intervalMs: Int64((interval * 1000).rounded()), iterations: iterations)
        } catch {
            return error.output
        }
        return context.standardOutputIsTerminal ? session.runInTerminal() : session.runPlain()
    }
}
