import LoopPlatform
import ArgumentParser
import LoopdClient

/// `loopctl jobs [filters] [--limit N] [--cursor C] [--all]`: a table of
/// jobs, oldest submission first, a page at a time or every page.
public struct JobsCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List jobs, oldest first: state, worker, action, times.",
        discussion: """
            Filters combine: --state (repeatable; any of the states given), \
            --worker, --action, --since. --since takes an RFC 3339 time \
            (2026-11-24T07:01:02Z, 2026-11-24T08:01:02+01:00) or a span back \
            from now: 90s, 10m, 2h, 1d.

            The daemon answers a page of at most --limit jobs (default \
            \(JobsQuery.defaultLimit)); when there are more, the last line tells \
            how to get the next page. --all fetches every page and prints one \
            table. With --json each page's reply line is printed as it came.
            """)

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// `--state`, repeatable: only jobs in one of these states.
    @Option(name: .customLong("state"), help: ArgumentHelp(
        "Only jobs in this state (repeat for several).", valueName: "state"))
    public var states: [JobStateArgument] = []

    /// `--worker`: only jobs on this worker.
    @Option(help: ArgumentHelp("Only jobs placed on this worker.", valueName: "name"))
    public var worker: String?

    /// `--action`: only jobs of this action.
    @Option(help: ArgumentHelp("Only jobs of this action.", valueName: "action"))
    public var action: String?

    /// `--since`: only jobs submitted at or after this time.
    @Option(help: ArgumentHelp("Only jobs submitted at or after this time (RFC 3339, or 10m, 2h, 1d ago).", valueName: "time"))
    public var since: SinceArgument?

    /// `--limit`: the page size.
    @Option(help: ArgumentHelp("At most this many jobs per page (1-\(JobsQuery.maxLimit)).", valueName: "n"))
    public var limit: Int?

    /// `--cursor`: start at the page a previous listing pointed to.
    @Option(help: ArgumentHelp("Start where a previous page ended (its next-page cursor).", valueName: "cursor"))
    public var cursor: String?

    /// `--all`: follow the cursors to the last page.
    @Flag(help: "Fetch every page and print them as one table.")
    public var all = false

    /// `--fleet`: the fleet's jobs instead of this host's.
    @Flag(help: "List the fleet's jobs (from the fleet's database) instead of this host's.")
    public var fleet = false

    /// `--with-fleet`: this host's jobs and the fleet's, in one list.
    @Flag(help: "List this host's jobs and the fleet's together, in the order they were submitted.")
    public var withFleet = false

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// Rejects what the daemon would refuse anyway, as a usage error (exit 2).
    public func validate() throws {
        if let limit, !(1...JobsQuery.maxLimit).contains(limit) {
            throw ValidationError("--limit must be 1...\(JobsQuery.maxLimit).")
        }
        if let cursor, cursor.isEmpty || cursor.utf8.count > JobsQuery.maxCursorBytes {
            throw ValidationError("--cursor must be 1 to \(JobsQuery.maxCursorBytes) bytes.")
        }
        if fleet && withFleet {
            throw ValidationError("--fleet lists the fleet's jobs alone, --with-fleet this host's and the fleet's: give one.")
        }
    }

    /// The first page's request, `--since` counted back from the real clock.
    public var requestFields: [(String, JSON)] {
        requestFields(sinceUnixMs: since?.resolve(nowUnixMs: unixMilliseconds()), cursor: cursor)
    }

    /// The request for the page at `cursor` (nil: the first page), with
    /// `--since` already resolved to an instant, so that every page of one
    /// listing asks about the same jobs.
    public func requestFields(sinceUnixMs: Int64?, cursor: String?) -> [(String, JSON)] {
        var fields: [(String, JSON)] = [("op", "jobs")]
        if !distinctStates.isEmpty { fields.append(("state", .array(distinctStates.map { .string($0.rawValue) }))) }
        if let worker { fields.append(("worker", .string(worker))) }
        if let action { fields.append(("action", .string(action))) }
        if let sinceUnixMs { fields.append(("since", .string(Timestamp.format(unixMilliseconds: sinceUnixMs)))) }
        if let limit { fields.append(("limit", .integer(Int64(limit)))) }
        if let cursor { fields.append(("cursor", .string(cursor))) }
        if fleet { fields.append(("fleet", true)) }
        if withFleet { fields.append(("with_fleet", true)) }
        return fields
    }

    /// The states asked for, each once, in the order first given.
    private var distinctStates: [JobState] {
        var seen: [JobState] = []
        for s in states where !seen.contains(s.state) { seen.append(s.state) }
        return seen
    }

    /// One page in human form, `--since` counted back from the real clock.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        try render(reply, sinceUnixMs: since?.resolve(nowUnixMs: unixMilliseconds()))
    }

    /// One page in human form: the table and, when there are more jobs, the
    /// command that lists the next page (with `--since` as `sinceUnixMs`,
    /// the instant the request carried).
    func render(_ reply: RawReply, sinceUnixMs: Int64?) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        let page = try JobList(reply)
        var text = JobList.table(page.jobs)
        if let next = page.nextCursor {
            text += "next page: " + nextPageCommand(cursor: next, sinceUnixMs: sinceUnixMs) + "\n"
        }
        return CommandOutput(standardOutput: text)
    }

    /// One page, or with `--all` every page, on one connection.
    public func converse(with client: LoopdClient.Blocking, in context: CommandContext) throws(ClientError) -> CommandOutput {
        let sinceUnixMs = since?.resolve(nowUnixMs: context.currentTimeUnixMs())
        guard all else {
            let reply = try client.call(requestFields(sinceUnixMs: sinceUnixMs, cursor: cursor))
            let output = try render(reply, sinceUnixMs: sinceUnixMs)
            return connection.json ? output.json(reply) : output
        }
        var cursor = self.cursor
        var jobs: [JSON] = []
        var lines = ""
        do throws(ClientError) {
            while true {
                let reply = try client.call(requestFields(sinceUnixMs: sinceUnixMs, cursor: cursor))
                lines += reply.line + "\n"
                guard reply.ok else { return partial(jobs: jobs, lines: lines, ending: .refused(reply)) }
                let page = try JobList(reply)
                jobs += page.jobs
                guard let next = page.nextCursor else { break }
                // A cursor that does not move would page forever.
                guard next != cursor else { throw .protocol("the daemon answered cursor \"\(next)\" with the same cursor") }
                cursor = next
            }
        } catch {
            // Pages already read are still worth printing.
            guard !(connection.json ? lines.isEmpty : jobs.isEmpty) else { throw error }
            return partial(jobs: jobs, lines: lines, ending: .failure(error))
        }
        return CommandOutput(standardOutput: connection.json ? lines : JobList.table(jobs))
    }

    /// What `--all` read before `ending` (a refusal, a lost connection, a
    /// bad reply) stopped it, then `ending`'s diagnostic and status.
    private func partial(jobs: [JSON], lines: String, ending: CommandOutput) -> CommandOutput {
        var output = ending
        output.standardOutput = connection.json ? lines : JobList.table(jobs)
        return output
    }

    /// The command line for the next page: this one's options (`--since` as
    /// the instant it stood for) and the cursor.
    func nextPageCommand(cursor: String, sinceUnixMs: Int64?) -> String {
        var words = ["loopctl", "jobs"]
        if let socket = connection.socket { words += ["--socket", socket] }
        for s in distinctStates { words += ["--state", s.rawValue] }
        if let worker { words += ["--worker", worker] }
        if let action { words += ["--action", action] }
        if let sinceUnixMs { words += ["--since", Timestamp.format(unixMilliseconds: sinceUnixMs)] }
        if let limit { words += ["--limit", String(limit)] }
        words += ["--cursor", cursor]
        return words.map(ShellWord.quoted).joined(separator: " ")
    }
}
