/// A key `loopctl top` acts on.
enum TopKey: Sendable, Equatable {
    /// `q`, Ctrl-C.
    case quit
    /// `p`: stop or resume refreshing.
    case pause
    /// `s`: the next order of the running jobs.
    case sort
    /// `w`: the next worker to show alone.
    case worker
    /// `a`: the next action to show alone.
    case action
    /// `?`, `h`: show or hide the keys.
    case help

    /// The keys in bytes read from a terminal in raw mode, in order. An
    /// escape sequence (an arrow key, a function key: ESC, then `[` or `O`,
    /// then parameters up to a final byte) is skipped whole, so the letters
    /// inside it are not taken for keys; any other byte means nothing.
    static func keys(in bytes: some Sequence<UInt8>) -> [TopKey] {
        var keys: [TopKey] = []
        var escape = EscapeState.none
        for byte in bytes {
            switch escape {
            case .none:
                if byte == 0x1B {
                    escape = .started
                } else if let key = TopKey(byte: byte) {
                    keys.append(key)
                }
            case .started:
                // ESC [ and ESC O open a sequence; ESC and another byte is Alt+byte.
                escape = byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") ? .parameters : .none
            case .parameters:
                if (0x40...0x7E).contains(byte) { escape = .none }
            }
        }
        return keys
    }

    private enum EscapeState { case none, started, parameters }

    /// The key one byte stands for, or nil.
    init?(byte: UInt8) {
        switch byte {
        case UInt8(ascii: "q"), 0x03: self = .quit
        case UInt8(ascii: "p"): self = .pause
        case UInt8(ascii: "s"): self = .sort
        case UInt8(ascii: "w"): self = .worker
        case UInt8(ascii: "a"): self = .action
        case UInt8(ascii: "?"), UInt8(ascii: "h"): self = .help
        default: return nil
        }
    }
}

/// What the person watching has chosen, and nothing else: changed only by
/// keys (`press`), read by the screen.
struct TopView: Sendable, Equatable {
    /// The order of the running jobs.
    enum Sort: String, Sendable {
        /// Longest running first.
        case duration
        /// By worker name, then longest first.
        case worker
        /// By action, then longest first.
        case action

        /// The order after this one, back to the first after the last.
        var next: Sort {
            switch self {
            case .duration: .worker
            case .worker: .action
            case .action: .duration
            }
        }
    }

    /// Refreshing is stopped; the screen keeps the last reading.
    var paused = false
    var sort = Sort.duration
    /// Only this worker, in the worker table and both job lists; nil: all.
    var worker: String?
    /// Only jobs of this action, in both job lists; nil: all. (A worker
    /// runs whatever comes, so the worker table shows every worker.)
    var action: String?
    /// The keys are shown.
    var showsHelp = false

    /// Applies `key`, but `quit`, which is the caller's. `w` and `a` step
    /// through `workers` and `actions` (all, then each in turn, then all
    /// again); a filter no longer among them steps back to all.
    mutating func press(_ key: TopKey, workers: [String], actions: [String]) {
        switch key {
        case .quit: break
        case .pause: paused.toggle()
        case .sort: sort = sort.next
        case .worker: worker = Self.step(worker, through: workers)
        case .action: action = Self.step(action, through: actions)
        case .help: showsHelp.toggle()
        }
    }

    /// The choice after `current`: the first of `choices` after all (nil),
    /// the next after each, all after the last.
    static func step(_ current: String?, through choices: [String]) -> String? {
        guard let current else { return choices.first }
        guard let index = choices.firstIndex(of: current), index + 1 < choices.count else { return nil }
        return choices[index + 1]
    }
}
