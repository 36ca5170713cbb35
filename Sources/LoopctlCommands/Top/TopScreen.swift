import LoopdProtocol

/// A screen's size in character cells.
struct ScreenSize: Sendable, Equatable {
    var rows: Int
    var columns: Int
}

/// One line of a frame, and how it is meant to look. A terminal gives it
/// the look; the plain form prints the text alone.
struct TopLine: Sendable, Equatable {
    enum Style: Sendable, Equatable {
        case plain
        /// A section's title, the daemon's name line.
        case title
        /// A table's column names.
        case columns
        /// Needs attention: a stalled worker, the paused view.
        case alert
        /// Secondary: an empty list, the key line.
        case dim
    }

    var text: String
    var style = Style.plain
}

/// Everything one frame of `loopctl top` shows.
struct TopSnapshot: Sendable, Equatable {
    /// The daemon's version, from `ping`.
    var version: String
    /// When the daemon's process started, when loopctl can tell.
    var daemonStartedAtUnixMs: Int64?
    var reading: TopReading
    var history: RateHistory
    var view: TopView
    /// The wall clock the durations are counted to.
    var nowUnixMs: Int64
    /// Failures are jobs submitted since this instant.
    var failuresSinceUnixMs: Int64
    /// The terminal's size; nil for the plain form, which has none: no
    /// line is clipped, no row left out, and there are no keys to show.
    var screen: ScreenSize?
}

/// The frame for a snapshot: a pure function, so what `loopctl top` shows
/// is tested without a terminal.
///
/// A frame is the header (the daemon, its job counters, the two rates with
/// their sparklines), three sections (workers, running jobs, failures),
/// and on a terminal the key line. On a terminal every line is clipped to
/// the width, and when the sections do not fit the height, the longest
/// list gives up rows first (its last row then says how many more there
/// are); the header and the key line stay.
enum TopScreen {
    /// An error message is cut to this many characters.
    static let errorMessageLength = 60

    /// The lines of the frame, top to bottom.
    static func lines(for snapshot: TopSnapshot) -> [TopLine] {
        let header = headerLines(snapshot)
        let footer = snapshot.screen == nil ? [] : footerLines(snapshot.view)
        var sections = [workers(snapshot), runningJobs(snapshot), failures(snapshot)]
        // The plain form separates frames with a blank line, so its
        // sections follow each other without one.
        let spaced = snapshot.screen != nil
        if let screen = snapshot.screen {
            Section.fit(&sections, into: screen.rows - header.count - footer.count, spaced: spaced)
        }
        var lines = header
        for section in sections { lines += section.lines(spaced: spaced) }
        lines += footer
        guard let screen = snapshot.screen else { return lines }
        return lines.prefix(max(0, screen.rows)).map {
            TopLine(text: TopText.clip($0.text, toCells: screen.columns), style: $0.style)
        }
    }

    // MARK: - Header

    private static func headerLines(_ s: TopSnapshot) -> [TopLine] {
        var daemon = ["loopd \(TopText.printable(s.version))"]
        if let started = s.daemonStartedAtUnixMs {
            daemon.append("up " + TextLayout.duration(milliseconds: max(0, s.nowUnixMs - started)))
        }
        if let connections = s.reading.counters.connections {
            daemon.append(connections == 1 ? "1 connection" : "\(connections) connections")
        }
        let now = Timestamp.format(unixMilliseconds: s.nowUnixMs)
        daemon.append(s.screen == nil ? now : timeOfDay(now))
        if s.view.paused { daemon.insert("PAUSED", at: 0) }

        let c = s.reading.counters
        func count(_ name: String, _ value: Int64?) -> String { "\(name) \(value.map(String.init) ?? "-")" }
        let jobs = "jobs  " + [
            count("accepted", c.accepted), count("completed", c.completed), count("failed", c.failed),
            count("timed out", c.timedOut), count("expired", c.expired), count("cancelled", c.cancelled),
        ].joined(separator: "  ") + "  ·  " + [count("queued", c.queued), count("running", c.running)].joined(separator: "  ")

        return [
            TopLine(text: daemon.joined(separator: " · "), style: s.view.paused ? .alert : .title),
            TopLine(text: jobs),
            TopLine(text: rateLine("throughput", s.history.throughput)),
            TopLine(text: rateLine("failures", s.history.failures)),
        ]
    }

    /// `throughput  20.0/s  ▁▃█`; `-` before there are two readings.
    private static func rateLine(_ name: String, _ values: [Double]) -> String {
        let label = name + String(repeating: " ", count: max(0, 10 - name.count)) + "  "
        guard let latest = values.last else { return label + "-" }
        return label + perSecond(latest) + "  " + Sparkline.text(values)
    }

    /// A rate with one decimal: `20.0/s`, `0.3/s`.
    static func perSecond(_ value: Double) -> String {
        let tenths = Int64((max(0, value) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)/s"
    }

    /// `07:01:02Z` of `2026-11-24T07:01:02.345Z`.
    private static func timeOfDay(_ timestamp: String) -> String {
        String(timestamp.dropFirst(11).prefix(8)) + "Z"
    }

    // MARK: - Sections

    private static func workers(_ s: TopSnapshot) -> Section {
        let all = s.reading.workers
        let shown = all.filter { s.view.worker == nil || $0.name == s.view.worker }
        let rows = shown.map { w -> [String] in
            let running: String = w.runningJob.map(TopText.printable) ?? (w.busy ? "busy" : "-")
            let loop: String = w.loop == "stalled" ? "stalled \(number(w.stalledMs))ms" : TopText.printable(w.loop)
            return [
                TopText.printable(w.name), TopText.printable(w.mode), number(w.queued), number(w.held), running,
                text(w.runningAction), since(w.runningSinceUnixMs, s.nowUnixMs), loop,
            ]
        }
        let count = shown.count == all.count ? "\(all.count)" : "\(shown.count) of \(all.count)"
        return Section(
            title: "Workers (\(count))",
            header: ["NAME", "MODE", "QUEUED", "HELD", "RUNNING", "ACTION", "FOR", "LOOP"],
            alignments: [.left, .left, .right, .right, .left, .left, .right, .left],
            rows: rows, alerts: shown.map { $0.loop == "stalled" })
    }

    private static func runningJobs(_ s: TopSnapshot) -> Section {
        let jobs = sorted(filtered(s.reading.running, s.view), by: s.view.sort, now: s.nowUnixMs)
        let rows = jobs.map { job -> [String] in
            [
                TopText.printable(job.id), TopText.printable(job.worker), TopText.printable(job.action),
                since(job.startedAtUnixMs, s.nowUnixMs),
            ]
        }
        let order = switch s.view.sort {
        case .duration: "longest first"
        case .worker: "by worker"
        case .action: "by action"
        }
        return Section(
            title: "Running jobs (\(jobs.count), \(order))",
            header: ["JOB", "WORKER", "ACTION", "FOR"], alignments: [.left, .left, .left, .right], rows: rows)
    }

    private static func failures(_ s: TopSnapshot) -> Section {
        let jobs = filtered(s.reading.failures, s.view).enumerated().sorted { a, b in
            // Newest end first; among equal ends (or none), the later submission.
            let (x, y) = (a.element.finishedAtUnixMs ?? .min, b.element.finishedAtUnixMs ?? .min)
            return x != y ? x > y : a.offset > b.offset
        }.map(\.element)
        let rows = jobs.map { job -> [String] in
            let error: String = job.errorMessage.map { TopText.truncated(TopText.printable($0), to: errorMessageLength) } ?? "-"
            return [
                TopText.printable(job.id), TopText.printable(job.action), TopText.printable(job.worker),
                TopText.printable(job.state), since(job.finishedAtUnixMs, s.nowUnixMs), error,
            ]
        }
        let windowStart = timeOfDay(Timestamp.format(unixMilliseconds: s.failuresSinceUnixMs))
        let more = s.reading.isComplete ? "" : "; more than loopctl reads a refresh"
        return Section(
            title: "Failures (\(jobs.count), newest first; submitted since \(windowStart)\(more))",
            header: ["JOB", "ACTION", "WORKER", "STATE", "AGO", "ERROR"],
            alignments: [.left, .left, .left, .left, .right, .left], rows: rows)
    }

    private static func number(_ value: Int64?) -> String { value.map { String($0) } ?? "-" }

    private static func text(_ value: String?) -> String { value.map(TopText.printable) ?? "-" }

    /// How long ago `instant` was at `now`: `12.3s`; `-` for no instant.
    private static func since(_ instant: Int64?, _ now: Int64) -> String {
        instant.map { TextLayout.duration(milliseconds: max(0, now - $0)) } ?? "-"
    }

    private static func filtered(_ jobs: [TopReading.Job], _ view: TopView) -> [TopReading.Job] {
        jobs.filter { (view.worker == nil || $0.worker == view.worker) && (view.action == nil || $0.action == view.action) }
    }

    /// Running jobs in `order`; ties, and jobs without a start, by id.
    static func sorted(_ jobs: [TopReading.Job], by order: TopView.Sort, now: Int64) -> [TopReading.Job] {
        func ran(_ job: TopReading.Job) -> Int64 { job.startedAtUnixMs.map { now - $0 } ?? -1 }
        return jobs.sorted { a, b in
            switch order {
            case .worker where a.worker != b.worker: return a.worker < b.worker
            case .action where a.action != b.action: return a.action < b.action
            default: return ran(a) != ran(b) ? ran(a) > ran(b) : a.id < b.id
            }
        }
    }

    // MARK: - Keys

    private static func footerLines(_ view: TopView) -> [TopLine] {
        var lines: [TopLine] = []
        if view.showsHelp {
            lines.append(TopLine(
                text: "q quit · p pause/resume · s sort running jobs · w next worker · a next action · ?/h hide this",
                style: .dim))
        }
        let state = "sort: \(view.sort.rawValue) · worker: \(view.worker.map(TopText.printable) ?? "all")"
            + " · action: \(view.action.map(TopText.printable) ?? "all") · ? keys"
        lines.append(TopLine(text: state, style: .dim))
        return lines
    }
}

/// A titled table of a frame, and how many of its rows fit.
private struct Section {
    var title: String
    /// The column names line and the row lines, aligned together.
    var table: [TopLine]
    /// How many lines the rows may take; all of them until `fit` says less.
    var rowLines: Int

    init(title: String, header: [String], alignments: [TextLayout.Alignment], rows: [[String]], alerts: [Bool] = []) {
        self.title = title
        guard !rows.isEmpty else {
            table = [TopLine(text: "  (none)", style: .dim)]
            rowLines = 0
            return
        }
        let text = TextLayout.table(header: header, alignments: alignments, rows: rows)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        table = lines.enumerated().map { index, line in
            if index == 0 { return TopLine(text: line, style: .columns) }
            return TopLine(text: line, style: alerts.indices.contains(index - 1) && alerts[index - 1] ? .alert : .plain)
        }
        rowLines = rows.count
    }

    /// Rows in the table (the column names and `(none)` are not rows).
    private var rowCount: Int { table.count - 1 }

    /// Lines the section takes besides its rows.
    private func fixedLines(spaced: Bool) -> Int { (spaced ? 1 : 0) + 2 }

    /// Lowers the sections' row lines until all of them fit `rows` lines:
    /// a line at a time from whichever shows most (the later one on a tie).
    static func fit(_ sections: inout [Section], into rows: Int, spaced: Bool) {
        func total() -> Int { sections.reduce(0) { $0 + $1.fixedLines(spaced: spaced) + $1.rowLines } }
        while total() > rows {
            var longest = 0
            for index in sections.indices where sections[index].rowLines >= sections[longest].rowLines { longest = index }
            guard sections[longest].rowLines > 0 else { return }
            sections[longest].rowLines -= 1
        }
    }

    /// The title, the column names and the rows that fit; when some do
    /// not, the last line shown says how many more there are.
    func lines(spaced: Bool) -> [TopLine] {
        var lines = spaced ? [TopLine(text: "")] : []
        lines.append(TopLine(text: title, style: .title))
        lines.append(table[0])
        if rowLines >= rowCount {
            lines += table.dropFirst()
        } else if rowLines > 0 {
            lines += table.dropFirst().prefix(rowLines - 1)
            lines.append(TopLine(text: "  … \(rowCount - rowLines + 1) more", style: .dim))
        }
        return lines
    }
}
