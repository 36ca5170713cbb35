import Foundation
import Testing
import LoopPlatform
import LoopdProtocol
@testable import LoopctlCommands

#if canImport(Glibc)
import Glibc
#endif

// loopctl top without a terminal: the frame is a pure function of the
// replies, the rates, the view and the screen's size, so these tests
// build it from fixed replies.

/// A reading decoded from reply members as the daemon writes them.
private func reading(stats: String = #"{"accepted":0,"completed":0,"failed":0,"timed_out":0}"#,
                     workers: String = "[]", running: String = "[]", failures: String = "[]") throws -> TopReading {
    func json(_ text: String) throws -> JSON { try JSONParser.parse(Array(text.utf8)) }
    return TopReading(
        counters: .init(stats: try json(stats)),
        workers: (try json(workers).arrayValue ?? []).map(TopReading.Worker.init),
        running: (try json(running).arrayValue ?? []).compactMap(TopReading.Job.init),
        failures: (try json(failures).arrayValue ?? []).compactMap(TopReading.Job.init))
}

/// 2026-11-24T07:01:10.000Z, the instant every fixture is read at.
private let now: Int64 = 1_795_503_670_000

/// An RFC 3339 time `ms` before `now`.
private func before(_ ms: Int64) -> String { Timestamp.format(unixMilliseconds: now - ms) }

private func snapshot(_ reading: TopReading, history: RateHistory = RateHistory(), view: TopView = TopView(),
                      screen: ScreenSize? = nil) -> TopSnapshot {
    TopSnapshot(
        version: "0.2.0", daemonStartedAtUnixMs: now - 65_000, reading: reading, history: history, view: view,
        nowUnixMs: now, failuresSinceUnixMs: now - TopSession.failureWindowMs, screen: screen)
}

private func texts(_ snapshot: TopSnapshot) -> [String] { TopScreen.lines(for: snapshot).map(\.text) }

/// The lines of the section titled `title…`, from its column names to the
/// line before the next title or key line (or the end).
private func section(_ title: String, in lines: [String]) -> [String] {
    guard let start = lines.firstIndex(where: { $0.hasPrefix(title) }) else { return [] }
    let rest = lines[(start + 1)...]
    let ends = ["Workers", "Running jobs", "Failures", "sort:", "q quit"]
    let end = rest.firstIndex { line in line.isEmpty || ends.contains { line.hasPrefix($0) } }
    return Array(rest[..<(end ?? rest.endIndex)])
}

/// The first cell of each row of a section (its column names left out).
private func firstCells(_ rows: [String]) -> [String] {
    rows.dropFirst().map { String($0.split(separator: " ").first ?? "") }
}

@Suite("loopctl top: the frame")
struct LoopctlTopFrameTests {
    @Test("the header: the daemon, its counters, and throughput and failures per second with sparklines, from stats readings")
    func headerFiguresAndSparklines() throws {
        let counters = try reading(stats: #"{"accepted":40,"completed":30,"failed":2,"timed_out":1,"cancelled":4,"expired":0,"queued":5,"running":2,"connections":3}"#)
        var history = RateHistory()
        #expect(texts(snapshot(counters, history: history))[2...3] == ["throughput  -", "failures    -"])

        history.record(.init(atNanoseconds: 1_000_000_000, completed: 10, failedOrTimedOut: 1))
        history.record(.init(atNanoseconds: 2_000_000_000, completed: 30, failedOrTimedOut: 3))
        let lines = texts(snapshot(counters, history: history))
        #expect(lines[0...3] == [
            "loopd 0.2.0 · up 1m05s · 3 connections · 2026-11-24T07:01:10.000Z",
            "jobs  accepted 40  completed 30  failed 2  timed out 1  expired 0  cancelled 4  ·  queued 5  running 2",
            "throughput  20.0/s  █",
            "failures    2.0/s  █",
        ])

        // Two seconds later: 10 more completed (5/s), no failure.
        history.record(.init(atNanoseconds: 4_000_000_000, completed: 40, failedOrTimedOut: 3))
        #expect(texts(snapshot(counters, history: history))[2...3] == ["throughput  5.0/s  █▄", "failures    0.0/s  █▁"])
    }

    @Test("sparklines: zero is the lowest block, the largest the highest, any trickle above zero visible; 60 values at most")
    func sparklineScale() {
        #expect(Sparkline.text([]) == "")
        #expect(Sparkline.text([0, 0]) == "▁▁")
        #expect(Sparkline.text([0, 0.01, 3, 6]) == "▁▂▅█")
        var history = RateHistory()
        for second in 0...100 {
            history.record(.init(atNanoseconds: UInt64(second) * 1_000_000_000, completed: Int64(second * second), failedOrTimedOut: 0))
        }
        #expect(history.throughput.count == RateHistory.capacity)
        #expect(history.throughput.last == 199)
    }

    @Test("a worker running another user's job shows busy with its action and how long it has run; the caller's own job its id")
    func busyWorker() throws {
        let workers = try reading(workers: """
            [{"name":"w1","mode":"default","queued":1,"held":0,"running":null,"busy":true,"running_action":"sleep","running_since":"\(before(12_300))","loop":"waiting","stalled_ms":0,"completed":6},
             {"name":"w2","mode":"maintenance","queued":0,"held":2,"running":"j-own","busy":true,"running_action":"echo","running_since":"\(before(4_000_000))","loop":"stalled","stalled_ms":5300,"completed":1},
             {"name":"w3","mode":"default","queued":0,"held":0,"running":null,"busy":false,"loop":"waiting","stalled_ms":0,"completed":0}]
            """)
        let lines = TopScreen.lines(for: snapshot(workers))
        #expect(section("Workers", in: lines.map(\.text)) == [
            "NAME  MODE         QUEUED  HELD  RUNNING  ACTION    FOR  LOOP",
            "w1    default           1     0  busy     sleep   12.3s  waiting",
            "w2    maintenance       0     2  j-own    echo    1h06m  stalled 5300ms",
            "w3    default           0     0  -        -           -  waiting",
        ])
        #expect(lines.first { $0.text.hasPrefix("w2") }?.style == .alert)
        #expect(lines.first { $0.text.hasPrefix("Workers") }?.text == "Workers (3)")
    }

    @Test("a narrow, short terminal: every line clipped to the width, the frame to the height, the longest list gives up rows first")
    func clippedToTheScreen() throws {
        let workers = (1...5).map { #"{"name":"worker-\#($0)","mode":"default","queued":0,"held":0,"running":null,"busy":false,"loop":"waiting","stalled_ms":0}"# }
        let running = (1...6).map { #"{"job":"job-\#($0)","state":"running","worker":"worker-1","action":"sleep","started_at":"\#(before(Int64($0) * 1000))"}"# }
        let failures = (1...3).map { #"{"job":"bad-\#($0)","state":"failed","worker":"worker-2","action":"fail","finished_at":"\#(before(Int64($0) * 1000))","error":{"code":"job_failed","message":"the fail action always fails, and this message is long"}}"# }
        let full = try reading(workers: "[\(workers.joined(separator: ","))]", running: "[\(running.joined(separator: ","))]",
                               failures: "[\(failures.joined(separator: ","))]")

        let small = ScreenSize(rows: 20, columns: 40)
        let lines = texts(snapshot(full, screen: small))
        #expect(lines.count == small.rows)
        #expect(lines.allSatisfy { TopText.cells($0) <= small.columns }, "\(lines)")
        #expect(lines[0] == "loopd 0.2.0 · up 1m05s · 07:01:10Z")
        #expect(lines.last?.hasPrefix("sort: duration · worker: all") == true, "the key line stays: \(lines)")
        for title in ["Workers (5)", "Running jobs (6, longest first)", "Failures (3, newest first"] {
            #expect(lines.contains { $0.hasPrefix(title) }, "no \(title): \(lines)")
        }
        // Each list keeps its first rows and counts the rest; the running
        // jobs kept are the longest running.
        let shownRunning = section("Running jobs", in: lines)
        #expect(firstCells(shownRunning).first == "job-6", "\(shownRunning)")
        let more = lines.compactMap { line in line.hasPrefix("  … ") ? Int(line.split(separator: " ")[1]) : nil }
        #expect(!more.isEmpty, "\(lines)")
        let rowsShown = ["Workers", "Running jobs", "Failures"].map { section($0, in: lines).count - 1 }.reduce(0, +)
        #expect(rowsShown - more.count + more.reduce(0, +) == 5 + 6 + 3, "every row is shown or counted: \(lines)")

        // Roomy: everything shown, nothing clipped.
        let roomy = texts(snapshot(full, screen: ScreenSize(rows: 60, columns: 200)))
        #expect(!roomy.contains { $0.hasPrefix("  … ") })
        #expect(section("Failures", in: roomy).count == 4)
        // Tiny: the header alone, cut.
        #expect(texts(snapshot(full, screen: ScreenSize(rows: 2, columns: 10))) == ["loopd 0.2.", "jobs  acce"])
    }

    @Test("s sorts the running jobs by duration, worker or action; w and a show one worker or action at a time")
    func sortingAndFilters() throws {
        let data = try reading(
            workers: #"[{"name":"w1","mode":"default","busy":true,"loop":"waiting"},{"name":"w2","mode":"default","busy":true,"loop":"waiting"}]"#,
            running: """
                [{"job":"a","state":"running","worker":"w1","action":"alpha","started_at":"\(before(5_000))"},
                 {"job":"b","state":"running","worker":"w2","action":"zulu","started_at":"\(before(30_000))"},
                 {"job":"c","state":"running","worker":"w1","action":"mike","started_at":"\(before(10_000))"}]
                """,
            failures: """
                [{"job":"f1","state":"failed","worker":"w1","action":"alpha","finished_at":"\(before(9_000))","error":{"code":"job_failed","message":"old"}},
                 {"job":"f2","state":"timed_out","worker":"w2","action":"zulu","finished_at":"\(before(1_000))","error":{"code":"timeout","message":"new"}},
                 {"job":"f3","state":"expired","worker":"w1","action":"mike","error":{"code":"expired","message":"never ran"}}]
                """)
        var view = TopView()
        func shown(_ title: String) -> [String] { firstCells(section(title, in: texts(snapshot(data, view: view)))) }
        let workers = data.workers.map(\.name), actions = ["alpha", "mike", "zulu"]

        #expect(shown("Running jobs") == ["b", "c", "a"])
        #expect(shown("Failures") == ["f2", "f1", "f3"], "newest end first; no end last")
        view.press(.sort, workers: workers, actions: actions)
        #expect(shown("Running jobs (3, by worker)") == ["c", "a", "b"])
        view.press(.sort, workers: workers, actions: actions)
        #expect(shown("Running jobs (3, by action)") == ["a", "c", "b"])
        view.press(.sort, workers: workers, actions: actions)
        #expect(view.sort == .duration)

        view.press(.worker, workers: workers, actions: actions)
        #expect(shown("Workers (1 of 2)") == ["w1"])
        #expect(shown("Running jobs") == ["c", "a"])
        #expect(shown("Failures") == ["f1", "f3"])
        view.press(.worker, workers: workers, actions: actions)
        #expect(shown("Workers") == ["w2"] && shown("Running jobs") == ["b"] && shown("Failures") == ["f2"])
        view.press(.worker, workers: workers, actions: actions)
        #expect(view.worker == nil && shown("Workers (2)") == ["w1", "w2"])

        view.press(.action, workers: workers, actions: actions)
        #expect(shown("Running jobs") == ["a"] && shown("Failures") == ["f1"])
        #expect(shown("Workers") == ["w1", "w2"], "the action filter leaves the workers")
        #expect(texts(snapshot(data, view: view, screen: ScreenSize(rows: 40, columns: 100))).last
                == "sort: duration · worker: all · action: alpha · ? keys")
        view.press(.action, workers: workers, actions: ["mike"])  // alpha is no longer seen: back to all
        #expect(view.action == nil)
    }

    @Test("p pauses (the header says so), ? and h show the keys")
    func pauseAndHelp() throws {
        var view = TopView()
        view.press(.pause, workers: [], actions: [])
        view.press(.help, workers: [], actions: [])
        let lines = TopScreen.lines(for: snapshot(try reading(), view: view, screen: ScreenSize(rows: 30, columns: 120)))
        #expect(lines[0].text.hasPrefix("PAUSED · loopd 0.2.0") && lines[0].style == .alert)
        #expect(lines[lines.count - 2].text.hasPrefix("q quit · p pause/resume · s sort"))
        #expect(texts(snapshot(try reading(), view: view)).allSatisfy { !$0.hasPrefix("q quit") && !$0.hasPrefix("sort:") },
                "the plain form has no keys to show")
    }

    @Test("the plain form has no escape bytes, whatever the daemon's strings hold; the terminal frame draws without clearing the screen")
    func plainHasNoEscapes() throws {
        let hostile = try reading(
            workers: #"[{"name":"w\u001b[2J1","mode":"default","busy":true,"running_action":"a\u009bb","loop":"waiting"}]"#,
            failures: #"[{"job":"f1","state":"failed","worker":"w1","action":"x","error":{"code":"job_failed","message":"line one\nline two \u001b]0;title\u0007"}}]"#)
        var history = RateHistory()
        history.record(.init(atNanoseconds: 0, completed: 0, failedOrTimedOut: 0))
        history.record(.init(atNanoseconds: 1_000_000_000, completed: 3, failedOrTimedOut: 1))
        let lines = TopScreen.lines(for: snapshot(hostile, history: history))
        let text = lines.map { $0.text + "\n" }.joined()
        #expect(!text.utf8.contains(0x1B) && !text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(text)")
        #expect(section("Failures", in: lines.map(\.text)).last?.hasSuffix("line one?line two ?]0;title?") == true, "\(text)")
        #expect(!lines.contains { $0.text.isEmpty }, "frames are separated by blank lines, so none inside one")

        let size = ScreenSize(rows: 30, columns: 80)
        let frame = TopTerminal.frame(TopScreen.lines(for: snapshot(hostile, history: history, screen: size)), size: size)
        #expect(frame.hasPrefix("\u{1B}[1;1H"))
        #expect(!frame.contains("\u{1B}[2J"), "no full clear: no flicker")
        #expect(frame.hasSuffix("\u{1B}[J"))
    }

    @Test("keys: q and Ctrl-C quit, p s w a ? h; an arrow or function key's sequence is not read as letters")
    func keysFromBytes() {
        #expect(TopKey.keys(in: Array("qpswa?h\u{3}".utf8)) == [.quit, .pause, .sort, .worker, .action, .help, .help, .quit])
        #expect(TopKey.keys(in: Array("\u{1B}[A\u{1B}[1;5D\u{1B}OPx\u{1B}[2~w".utf8)) == [.worker])
    }

    @Test("the daemon's own decoder accepts the requests of a reading")
    func requestsDecode() throws {
        let since = now - TopSession.failureWindowMs
        let lines = [
            TopFetch.jobsRequest(states: [.running], sinceUnixMs: nil, cursor: nil),
            TopFetch.jobsRequest(states: JobState.failures, sinceUnixMs: since, cursor: "c-1"),
        ].map { JSON.object([("id", 1)] + $0).serialized() }
        #expect(try RequestDecoder.decode(Array(lines[0].utf8)).get()
                == Request(id: .integer(1), operation: .jobs(JobsQuery(states: [.running], limit: JobsQuery.maxLimit))))
        #expect(try RequestDecoder.decode(Array(lines[1].utf8)).get() == Request(id: .integer(1), operation: .jobs(JobsQuery(
            states: [.failed, .timedOut, .expired], submittedSinceUnixMs: since, limit: JobsQuery.maxLimit, cursor: "c-1"))))
    }
}

@Suite("loopctl top: options")
struct LoopctlTopOptionTests {
    @Test("--json is refused as a usage error (exit 2) that names the commands with JSON")
    func jsonIsRefused() {
        let captured = Captured()
        #expect(Loopctl.execute(["top", "--json", "--socket", "/nowhere.sock"], in: captured.context()) == .usage)
        #expect(captured.err.contains("loopctl workers --json") && captured.err.contains("stats --json"), "\(captured.err)")
        #expect(captured.out.isEmpty)
    }

    @Test("--interval takes 0.1 to 3600 seconds, fractions too; --iterations at least 1; the rest is a usage error")
    func intervalAndIterations() throws {
        let top: TopCommand = try parse(["top", "--interval", "0.25", "--iterations", "3"])
        #expect(top.interval == 0.25 && top.iterations == 3)
        #expect(try (parse(["top"]) as TopCommand).interval == 1)
        for bad in [["--interval", "0.05"], ["--interval", "3601"], ["--interval", "nan"], ["--iterations", "0"]] {
            let captured = Captured()
            #expect(Loopctl.execute(["top", "--socket", "/nowhere.sock"] + bad, in: captured.context()) == .usage, "\(bad)")
        }
    }

    @Test("help documents the keys, the plain form for a pipe, --iterations and why there is no --json")
    func helpDiscussion() {
        let captured = Captured()
        #expect(Loopctl.execute(["top", "--help"], in: captured.context()) == .ok)
        // Help is wrapped to the terminal's width: compare words, not lines.
        let help = captured.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for phrase in ["Ctrl-C", "p pauses", "standard output is not a terminal", "--iterations N", "top -n", "loopctl workers --json"] {
            #expect(help.contains(phrase), "help lacks \(phrase)")
        }
    }
}

@Suite("loopctl top: signals")
struct LoopctlTopSignalTests {
    /// Whether the calling thread's mask blocks `signal`, as the kernel says.
    private func isBlocked(_ signal: Int32) throws -> Bool {
        let status = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
        let mask = try #require(UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16))
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    @Test("a signal that an inherited mask blocks, even one already pending, reaches the signal pipe; closing gives the mask back")
    func inheritedMaskDoesNotHideSignals() throws {
        var blocked = SignalPlatform.signalSet([SIGUSR1]), before = sigset_t()
        #expect(pthread_sigmask(SIG_BLOCK, &blocked, &before) == 0)
        defer { pthread_sigmask(SIG_SETMASK, &before, nil) }
        #expect(pthread_kill(pthread_self(), SIGUSR1) == 0)  // pending: the mask holds it

        let pipe = try SignalPipe(routing: [SIGUSR1])
        #expect(throws: PlatformError.self, "one signal pipe a process") { try SignalPipe(routing: [SIGUSR2]) }
        #expect(try !isBlocked(SIGUSR1))
        #expect(pipe.take() == [SIGUSR1])
        #expect(pthread_kill(pthread_self(), SIGUSR1) == 0)
        #expect(pthread_kill(pthread_self(), SIGUSR1) == 0)
        #expect(pipe.take() == [SIGUSR1], "each signal once")
        #expect(pipe.take() == [])
        pipe.close()
        #expect(try isBlocked(SIGUSR1), "the mask as it was")
    }
}
