import LoopPlatform
import LoopdClient

/// One run of `loopctl top` on a connected client: a reading every
/// interval, the rates between readings, the view the keys change, and the
/// frames, either drawn over each other in a terminal (`runInTerminal`) or
/// printed one after another (`runPlain`).
struct TopSession {
    /// Failures are jobs submitted up to this long before the view started.
    static let failureWindowMs: Int64 = 5 * 60_000

    private let client: LoopdClient.Blocking
    private let context: CommandContext
    /// Between readings, in nanoseconds.
    private let intervalNs: UInt64
    /// Stop after this many readings; nil: run until asked to stop.
    private let iterations: Int?
    private let version: String
    private let daemonStartedAtUnixMs: Int64?
    private let failuresSinceUnixMs: Int64

    private var reading: TopReading
    /// The wall clock at `reading`: durations are counted to it, so a
    /// paused frame stays as it was read.
    private var readAtUnixMs: Int64
    private var history = RateHistory()
    private var view = TopView()
    /// Every action the readings named, for `a`.
    private var actionsSeen: Set<String> = []
    /// Readings made.
    private var readings = 0

    /// Asks the daemon who it is and makes the first reading. Nothing is
    /// shown yet, so a daemon that is not there is reported as by any command.
    init(client: LoopdClient.Blocking, context: CommandContext, intervalMs: Int64, iterations: Int?) throws(TopFetchFailure) {
        self.client = client
        self.context = context
        intervalNs = UInt64(max(1, intervalMs)) * 1_000_000
        self.iterations = iterations
        let identity = try TopFetch.identity(from: client)
        version = identity.version
        daemonStartedAtUnixMs = identity.pid.flatMap(Self.startOfDaemon)
        let now = context.currentTimeUnixMs()
        failuresSinceUnixMs = now - Self.failureWindowMs
        reading = TopReading(counters: .init(), workers: [], running: [], failures: [])
        readAtUnixMs = now
        try refresh()
    }

    /// When the daemon's process started, if process `pid` here is loopd
    /// (loopctl may live in another pid namespace, where that pid is
    /// someone else, or not be allowed to look).
    private static func startOfDaemon(pid: Int64) -> Int64? {
        guard let pid = Int32(exactly: pid), processName(pid) == "loopd" else { return nil }
        return processStartedAtUnixMilliseconds(pid)
    }

    /// Reads the daemon again.
    private mutating func refresh() throws(TopFetchFailure) {
        reading = try TopFetch.reading(from: client, failuresSinceUnixMs: failuresSinceUnixMs)
        readAtUnixMs = context.currentTimeUnixMs()
        readings += 1
        let counters = reading.counters
        if let completed = counters.completed, let failed = counters.failedOrTimedOut {
            history.record(.init(atNanoseconds: monotonicNanoseconds(), completed: completed, failedOrTimedOut: failed))
        }
        actionsSeen.formUnion(reading.workers.compactMap(\.runningAction))
        actionsSeen.formUnion((reading.running + reading.failures).map(\.action))
    }

    private var isDone: Bool { iterations.map { readings >= $0 } ?? false }

    /// What a frame shows now, on a screen of `size` (nil: plain).
    private func snapshot(screen size: ScreenSize?) -> TopSnapshot {
        TopSnapshot(
            version: version, daemonStartedAtUnixMs: daemonStartedAtUnixMs, reading: reading, history: history,
            view: view, nowUnixMs: readAtUnixMs, failuresSinceUnixMs: failuresSinceUnixMs, screen: size)
    }

    // MARK: - Plain

    /// Prints a frame per reading, a blank line between frames, until
    /// `iterations` frames (for ever without), or until standard output
    /// cannot be written (`loopctl top | head`: the reader has gone). Ends
    /// with the failure of a reading, when one fails.
    mutating func runPlain() -> CommandOutput {
        var next = monotonicNanoseconds()
        while true {
            let text = TopScreen.lines(for: snapshot(screen: nil)).map { $0.text + "\n" }.joined()
            context.standardOutput((readings > 1 ? "\n" : "") + text)
            if isDone || context.standardOutputFailed() { return CommandOutput() }
            next += intervalNs
            let now = monotonicNanoseconds()
            if next > now { blockThread(milliseconds: Int64((next - now) / 1_000_000)) }
            do {
                try refresh()
            } catch {
                return error.output
            }
        }
    }

    // MARK: - Terminal

    /// Takes the terminal over and shows the view until `q`, Ctrl-C, a
    /// signal, `iterations` frames or a failed reading; gives the terminal
    /// back before returning, so the caller prints the reason on the main
    /// screen. When the terminal cannot be taken over, prints plain frames.
    mutating func runInTerminal() -> CommandOutput {
        let terminal: TopTerminal
        do {
            terminal = try TopTerminal()
        } catch {
            context.standardError("loopctl: cannot take the terminal over (\(error)); printing plain frames\n")
            return runPlain()
        }
        defer { terminal.leave() }
        return show(in: terminal)
    }

    private mutating func show(in terminal: TopTerminal) -> CommandOutput {
        let size = terminal.size
        terminal.draw(TopScreen.lines(for: snapshot(screen: size)), size: size)
        var deadline = monotonicNanoseconds() + intervalNs
        while !isDone {
            var redraw = false
            let now = monotonicNanoseconds()
            let events: [TopTerminal.Event]
            do {
                events = try terminal.wait(milliseconds: deadline > now ? Int64((deadline - now + 999_999) / 1_000_000) : 0)
            } catch {
                // poll(2) of two open descriptors fails only for want of memory.
                return CommandOutput(diagnostic: "loopctl: \(error)", status: .protocolError)
            }
            for event in events {
                switch event {
                case .keys(let keys):
                    for key in keys {
                        if key == .quit { return CommandOutput() }
                        let wasPaused = view.paused
                        view.press(key, workers: reading.workers.map(\.name), actions: actionsSeen.sorted())
                        // Resuming reads at once rather than at the next tick.
                        if wasPaused && !view.paused { deadline = monotonicNanoseconds() }
                    }
                    redraw = true
                case .resized:
                    redraw = true
                case .stop, .inputGone:
                    return CommandOutput()
                }
            }
            let after = monotonicNanoseconds()
            if after >= deadline {
                deadline += intervalNs
                // A slow reading or a stopped process skips ticks rather than bunching them.
                if deadline <= after { deadline = after + intervalNs }
                if !view.paused {
                    do {
                        try refresh()
                    } catch {
                        return error.output
                    }
                    redraw = true
                }
            }
            if redraw {
                let size = terminal.size
                terminal.draw(TopScreen.lines(for: snapshot(screen: size)), size: size)
            }
        }
        return CommandOutput()
    }
}
