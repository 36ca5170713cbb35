import ArgumentParser
import LoopdClient

/// `loopctl schedules`: the configured schedules, and an administrator's
/// `pause`, `resume` and `trigger`.
public struct SchedulesCommand: ParsableCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "List the schedules; pause, resume or trigger one.",
        discussion: """
            Schedules are the [schedules.NAME] tables of loopd.toml: a job \
            submitted at every slot of an interval or cron grid. Their jobs \
            are loopd's own; an administrator sees which job each last ran.
            """,
        subcommands: [SchedulesListCommand.self, ScheduleCommandPause.self, ScheduleCommandResume.self,
                      ScheduleCommandTrigger.self],
        defaultSubcommand: SchedulesListCommand.self)

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}
}

/// `loopctl schedules [list]`: one line per schedule.
public struct SchedulesListCommand: ClientCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the schedules: when each runs next, what it last did.")

    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", "schedules")] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else { return .refused(reply) }
        guard let schedules = reply.json["schedules"]?.arrayValue else {
            throw .protocol("schedules reply lacks the array \"schedules\": \(reply.line)")
        }
        let rows = schedules.map { s in
            [
                s["name"]?.stringValue ?? "?",
                s["when"]?.stringValue ?? "?",
                s["paused"]?.boolValue == true ? "paused" : (s["next_run"]?.stringValue ?? "never"),
                s["last_slot"]?.stringValue ?? "-",
                s["last_job"]?.stringValue ?? "-",
                s["last_state"]?.stringValue ?? (s["last_error"]?.stringValue == nil ? "-" : "refused"),
                s["fired"]?.integerValue.map(String.init) ?? "-",
                s["skipped"]?.integerValue.map(String.init) ?? "-",
            ]
        }
        let table = TextLayout.table(
            header: ["NAME", "WHEN", "NEXT RUN", "LAST SLOT", "LAST JOB", "STATE", "RUNS", "SKIPPED"],
            alignments: [.left, .left, .left, .left, .left, .left, .right, .right],
            rows: rows)
        return CommandOutput(standardOutput: table)
    }
}

/// What `pause`, `resume` and `trigger` share: one schedule named, an
/// administrator's request.
public protocol ScheduleControl: ClientCommand {
    /// The operation sent.
    static var command: ScheduleCommand { get }
    /// The schedule's name.
    var schedule: String { get }
}

extension ScheduleControl {
    /// The request line's members after `id`.
    public var requestFields: [(String, JSON)] { [("op", .string(Self.command.rawValue)), ("schedule", .string(schedule))] }

    /// Human output and exit status for `reply`.
    public func render(_ reply: RawReply) throws(ClientError) -> CommandOutput {
        guard reply.ok else {
            return .refusedUnlessAdministrator(reply, may: "\(Self.command.rawValue) a schedule")
        }
        switch Self.command {
        case .pause: return CommandOutput(standardOutput: "\(schedule): paused\n")
        case .resume: return CommandOutput(standardOutput: "\(schedule): resumed\n")
        case .trigger:
            guard let job = reply.json["job"]?.stringValue else {
                throw .protocol("trigger reply lacks \"job\": \(reply.line)")
            }
            return CommandOutput(standardOutput: job + "\n")
        }
    }
}

/// `loopctl schedules pause NAME`.
public struct ScheduleCommandPause: ScheduleControl {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "pause", abstract: "Stop a schedule firing (kept across restarts) until it is resumed.")
    public static let command = ScheduleCommand.pause
    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions
    /// The schedule.
    @Argument(help: "The schedule's name.") public var schedule: String
    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}
}

/// `loopctl schedules resume NAME`.
public struct ScheduleCommandResume: ScheduleControl {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Let a paused schedule fire again, from its next slot (the paused ones are not caught up).")
    public static let command = ScheduleCommand.resume
    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions
    /// The schedule.
    @Argument(help: "The schedule's name.") public var schedule: String
    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}
}

/// `loopctl schedules trigger NAME`: prints the job's id.
public struct ScheduleCommandTrigger: ScheduleControl {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "trigger", abstract: "Run a schedule's job now, outside its grid; prints the job's id.")
    public static let command = ScheduleCommand.trigger
    /// `--socket` and `--json`.
    @OptionGroup public var connection: ConnectionOptions
    /// The schedule.
    @Argument(help: "The schedule's name.") public var schedule: String
    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}
}
