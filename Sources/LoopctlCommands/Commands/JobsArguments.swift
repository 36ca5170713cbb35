import ArgumentParser
import LoopdProtocol

/// `jobs --state S`: a job state by its wire name (`queued`, `timed_out`, …).
public struct JobStateArgument: ExpressibleByArgument, Sendable, Equatable {
    /// The state.
    public var state: JobState

    /// Creates the argument for `state`.
    public init(_ state: JobState) { self.state = state }

    /// The state named `argument`, or nil (a usage error) for any other word.
    public init?(argument: String) {
        guard let state = JobState(rawValue: argument) else { return nil }
        self.state = state
    }

    /// Every state name, for help and shell completion.
    public static var allValueStrings: [String] { JobState.allCases.map(\.rawValue) }
}

/// `jobs --since TIME`: an RFC 3339 time, or a span back from now such as
/// `90s`, `10m`, `2h` or `1d`.
public enum SinceArgument: ExpressibleByArgument, Sendable, Equatable {
    /// A fixed instant, in Unix milliseconds.
    case instant(unixMs: Int64)
    /// This many milliseconds before the command runs.
    case ago(milliseconds: Int64)

    /// Reads `2026-11-24T07:01:02Z`-style times and `<digits><s|m|h|d>`
    /// spans (at most nine digits); nil (a usage error) for anything else.
    public init?(argument: String) {
        if let ms = Timestamp.parse(argument) {
            self = .instant(unixMs: ms)
            return
        }
        guard let unit = argument.last, argument.count >= 2 else { return nil }
        let number = argument.dropLast()
        guard number.count <= 9, number.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int64(number) else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        default: return nil
        }
        self = .ago(milliseconds: n * scale)
    }

    /// The instant meant when the current time is `nowUnixMs`.
    public func resolve(nowUnixMs: Int64) -> Int64 {
        switch self {
        case .instant(let ms): ms
        case .ago(let span): nowUnixMs - span
        }
    }
}
