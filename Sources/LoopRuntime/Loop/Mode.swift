
extension Loop {
    /// A run-loop mode: a name for a set of sources, timers and observers (R4).
    /// Custom modes are just names: `let tracking: Loop.Mode = "tracking"`.
    public struct Mode: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The mode's name.
        public let rawValue: String

        /// The mode named `rawValue`; two modes with the same name are the same mode.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The mode named by a string literal: `let tracking: Loop.Mode = "tracking"`.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The mode a loop runs in unless told otherwise; initially the only common mode.
        public static let `default` = Mode("kLoopDefaultMode")
        /// The pseudo-mode standing for every mode in the loop's common set (R7).
        /// Items added to it join every common mode; a run cannot name it.
        public static let common = Mode("kLoopCommonModes")

        /// The mode's name, as the loop's description prints it.
        public var description: String { rawValue }
    }

    /// Why a call to `run(mode:timeout:returnAfterSourceHandled:)` returned.
    public enum RunResult: Sendable, Equatable, CustomStringConvertible {
        /// The mode had no sources and no timers (R3), or lost its last one.
        case finished
        /// `stop()` was called (R20).
        case stopped
        /// The run's timeout passed.
        case timedOut
        /// A source was handled and the run was asked to return after one.
        case handledSource

        /// The case's name: `"finished"`, `"stopped"`, `"timedOut"` or `"handledSource"`.
        public var description: String {
            switch self {
            case .finished: "finished"
            case .stopped: "stopped"
            case .timedOut: "timedOut"
            case .handledSource: "handledSource"
            }
        }
    }

    /// The points of a run that observers can watch (R16).
    public struct Activity: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// One bit per activity, with Core Foundation's `CFRunLoopActivity` values.
        public let rawValue: UInt32
        /// The activities whose bits `rawValue` sets.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// A run starts.
        public static let entry = Activity(rawValue: 1 << 0)
        /// A pass is about to fire due timers.
        public static let beforeTimers = Activity(rawValue: 1 << 1)
        /// A pass is about to fire signalled version-0 sources.
        public static let beforeSources = Activity(rawValue: 1 << 2)
        /// The loop is about to sleep.
        public static let beforeWaiting = Activity(rawValue: 1 << 5)
        /// The loop woke up, before handling what woke it.
        public static let afterWaiting = Activity(rawValue: 1 << 6)
        /// A run ends.
        public static let exit = Activity(rawValue: 1 << 7)
        /// Every activity.
        public static let all: Activity = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]

        /// The activities' names joined by `|`, such as `"entry|exit"`.
        public var description: String {
            let names: [(Activity, String)] = [
                (.entry, "entry"), (.beforeTimers, "beforeTimers"), (.beforeSources, "beforeSources"),
                (.beforeWaiting, "beforeWaiting"), (.afterWaiting, "afterWaiting"), (.exit, "exit"),
            ]
            return names.filter { contains($0.0) }.map(\.1).joined(separator: "|")
        }
    }
}
