import Foundation
import LoopdClient

/// `/`: the workers, what runs, the latest jobs, and charts of the
/// daemon's own figures.
enum OverviewPage {
    static func live(_ o: DaemonView.Overview, context: PageContext) -> HTML {
        let s = o.stats
        let totals: HTML = """
            <section aria-label="Totals"><dl class="totals">\
            <div><dt>Queued</dt><dd>\(s.queued)</dd></div><div><dt>Running</dt><dd>\(s.running)</dd></div>\
            <div><dt>Completed</dt><dd>\(s.completed)</dd></div><div><dt>Failed</dt><dd>\(s.failed + s.timedOut)</dd></div>\
            <div><dt>Cancelled</dt><dd>\(s.cancelled)</dd></div><div><dt>Connections</dt><dd>\(s.connections)</dd></div>\
            </dl></section>
            """
        let workers = Layout.table(
            caption: "Workers", head: ["Worker", "Mode", "Queued", "Held", "Running", "Loop", "Done"],
            rows: o.workers.map { worker(row: $0, context: context) }, empty: "No workers.")
        let running = Layout.table(
            caption: "Running", head: ["Job", "Action", "Worker", "Started", "Running for"],
            rows: o.running.map { j in
                let ms = j.startedAt.map { Int64(Date().timeIntervalSince($0) * 1000) } ?? 0
                return "<tr><td>\(Layout.jobLink(j.job))</td><td>\(j.action ?? "")</td><td>\(j.worker ?? "")</td><td>\(TimeText.element(j.startedAt))</td><td>\(TimeText.duration(ms: ms))</td></tr>"
            }, empty: "Nothing runs.")
        let recent = Layout.table(
            caption: "Latest jobs", head: ["Job", "State", "Action", "Worker", "Submitted", "Ran"],
            rows: o.recent.jobs.map(JobsListPage.row), empty: "No job in the last 15 minutes.")
        let partial: HTML = o.recent.isComplete ? ""
            : "<p class=\"empty\">More jobs were submitted in the last \(Int(o.recent.window)) s than were read: newer ones may be missing.</p>"
        return "\(totals)\(charts(o.charts, range: o.range))\(workers)\(running)\(recent)\(partial)"
    }

    static func worker(row w: WorkerInfo, context: PageContext) -> HTML {
        let running: HTML
        if let id = w.running {
            running = "\(Layout.jobLink(id)) \(w.runningAction ?? "")"
        } else if w.busy {
            running = "another user's \(w.runningAction ?? "job")"
        } else {
            running = "–"
        }
        let loop: HTML = w.loop == "stalled" ? "<strong class=\"stalled\">stalled \(TimeText.duration(ms: w.stalledMs))</strong>" : "\(w.loop)"
        let modeForm = Layout.button(
            "Switch", action: "/workers/\(percentEncoded(w.name))/mode", context: context,
            extra: "<label class=\"sr\" for=\"mode-\(w.name)\">Mode of \(w.name)</label><input id=\"mode-\(w.name)\" name=\"mode\" value=\"\(w.mode)\" size=\"10\" required>")
        return "<tr><th scope=\"row\">\(w.name)</th><td>\(w.mode) \(modeForm)</td><td>\(w.queued)</td><td>\(w.held)</td><td>\(running)</td><td>\(loop)</td><td>\(w.completed)</td></tr>"
    }

    static func charts(_ c: ChartSeries, range: ChartRange) -> HTML {
        let spanText = range == .minutes ? "10 min ago" : "24 h ago"
        let span: TimeInterval = range == .minutes ? 600 : 86400
        let end = Date()
        let rate: @Sendable (Double) -> String = { v in v >= 10 || v == 0 ? String(format: "%.0f/s", v) : String(format: "%.1f/s", v) }
        let throughput = SVGChart(
            title: "Jobs per second", lines: [
                .init(name: "completed", style: "s1", values: c.completedPerSecond.map { $0 }),
                .init(name: "failed", style: "s3", values: c.failedPerSecond.map { $0 }),
            ], times: c.times, end: end, span: span, format: rate, spanText: spanText)
        let wait = SVGChart(
            title: "Wait before start", lines: quantileLines(c.wait), times: c.times, end: end, span: span,
            format: TimeText.seconds, spanText: spanText)
        let run = SVGChart(title: "Run time", lines: quantileLines(c.run), times: c.times, end: end, span: span,
                           format: TimeText.seconds, spanText: spanText)
        let other = range == .minutes ? ChartRange.day : .minutes
        return """
            <section aria-label="Charts"><h2>Figures, \(range.title)</h2>\
            <p><a href="/?range=\(other.rawValue)">Show the \(other.title)</a></p>\
            <div class="charts">\(throughput.svg)\(wait.svg)\(run.svg)</div></section>
            """
    }

    private static func quantileLines(_ q: [ChartSeries.Quantiles]) -> [SVGChart.Line] {
        [.init(name: "p50", style: "s1", values: q.map(\.p50)), .init(name: "p95", style: "s2", values: q.map(\.p95)),
         .init(name: "p99", style: "s3", values: q.map(\.p99))]
    }
}
