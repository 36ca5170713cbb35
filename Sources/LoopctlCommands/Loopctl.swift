import LoopPlatform
import ArgumentParser
import LoopdProtocol

/// `loopctl`, the root command: the subcommands and the exit codes.
public struct Loopctl: ParsableCommand {
    /// The subcommand's name and help text.
    public static let configuration = CommandConfiguration(
        commandName: "loopctl",
        abstract: "Talk to loopd: submit jobs, list and wait for them, inspect workers, switch modes.",
        discussion: """
            The daemon's socket is --socket PATH, else $LOOPD_SOCKET, else \
            /run/loopd.sock; a loopd.sock in the current directory (make run's) \
            is used only when named (--socket ./loopd.sock). Before sending \
            anything, loopctl checks which uid made the socket listen: \
            --server-uid N, else $LOOPD_SERVER_UID, else uid 0 at /run/loopd.sock \
            and no check at other paths; 'any' turns the check off. Every \
            subcommand prints human output; --json prints the daemon's raw reply \
            line instead (the exit code is the same), except top, a live view.
            """ + "\n\n" + ExitStatus.helpText + "\n\n" + "The protocol itself is documented in docs/PROTOCOL.md.",
        version: LoopdVersion.current,
        subcommands: [
            SubmitCommand.self, WaitCommand.self, StatusCommand.self, JobsCommand.self, CancelCommand.self,
            RetryCommand.self, DiscardCommand.self,
            WorkersCommand.self, TopCommand.self, InspectCommand.self, ModeCommand.self, SchedulesCommand.self, FleetCommand.self,
            StatsCommand.self, MetricsCommand.self, PingCommand.self,
        ])

    /// Creates the command with its defaults (ArgumentParser fills in the rest).
    public init() {}

    /// Runs loopctl with the process's arguments and exits with its status.
    /// Replaces ArgumentParser's `main()` so usage errors exit 2, not 64.
    public static func main() {
        let status = execute(Array(CommandLine.arguments.dropFirst()), in: .process)
        LoopctlEventLoop.shutDown()
        exitProcess(status.code)
    }

    /// Parses `arguments` (without the program name), runs the command in
    /// `context` and returns the exit status; everything is printed through
    /// `context`. Tests call this to run loopctl in-process.
    public static func execute(_ arguments: [String], in context: CommandContext) -> ExitStatus {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            return report(error, in: context)
        }
        if let client = command as? any ClientCommand {
            return client.perform(in: context)
        }
        // Only the root itself is left: with no subcommand it shows help.
        do {
            var root = command
            try root.run()
            return .ok
        } catch {
            return report(error, in: context)
        }
    }

    /// Prints ArgumentParser's message for `error` (help on stdout, errors on
    /// stderr) and maps its exit code: success stays 0, every usage error is 2.
    private static func report(_ error: any Error, in context: CommandContext) -> ExitStatus {
        let message = fullMessage(for: error)
        let code = exitCode(for: error)
        if code == .success {
            context.standardOutput(message.isEmpty ? "" : message + "\n")
            return .ok
        }
        context.standardError(message.isEmpty ? "" : message + "\n")
        return .usage
    }
}
