import Foundation
import Testing
@testable import LoopdWeb

/// The pages' building blocks: escaping, figures, charts.
struct RenderingTests {
    /// Text from a job (arguments, output, errors) can never become markup.
    @Test func interpolatedTextIsEscaped() {
        let hostile = "<script>alert('x')</script>&\""
        let html: HTML = "<td>\(hostile)</td>"
        #expect(html.markup == "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;</td>")
        let inner: HTML = "<b>\("a<b")</b>"
        let outer: HTML = "<p>\(inner)</p>"
        #expect(outer.markup == "<p><b>a&lt;b</b></p>")
    }

    @Test func queryStringsLeaveOutEmptyValuesAndEncode() {
        #expect(queryString([("state", "failed"), ("worker", nil), ("action", ""), ("since", "1h")]) == "?state=failed&since=1h")
        #expect(queryString([("page", "/jobs?x=1 2")]) == "?page=%2Fjobs%3Fx%3D1%202")
        #expect(queryString([]) == "")
    }

    /// Quantiles as Prometheus's histogram_quantile computes them.
    @Test func histogramQuantilesInterpolateInsideTheBucket() {
        let text = """
            # TYPE loopd_job_wait_seconds histogram
            loopd_job_wait_seconds_bucket{worker="w1",le="0.01"} 4
            loopd_job_wait_seconds_bucket{worker="w1",le="0.1"} 8
            loopd_job_wait_seconds_bucket{worker="w1",le="+Inf"} 10
            loopd_job_wait_seconds_bucket{worker="w2",le="0.01"} 6
            loopd_job_wait_seconds_bucket{worker="w2",le="0.1"} 10
            loopd_job_wait_seconds_bucket{worker="w2",le="+Inf"} 10
            loopd_job_wait_seconds_sum{worker="w2"} 1
            loopd_job_run_seconds_bucket{action="x",worker="w1",le="0.01"} 99
            """
        let h = Histogram(family: "loopd_job_wait_seconds", in: text)
        #expect(h.bounds == [0.01, 0.1, .infinity])
        #expect(h.counts == [10, 18, 20])
        #expect(h.quantile(0.5) == 0.01)
        // rank 15 of 20 is 5 of the 8 observations in (0.01, 0.1].
        #expect(abs(h.quantile(0.75)! - (0.01 + 0.09 * 5 / 8)) < 1e-12)
        // In the +Inf bucket: the highest finite bound.
        #expect(h.quantile(0.99) == 0.1)
        #expect(Histogram(bounds: [1, .infinity], counts: [0, 0]).quantile(0.5) == nil)
    }

    /// A restart of loopd sets its counters back: a chart counts from zero
    /// instead of drawing a negative rate.
    @Test func chartSeriesSurviveARestartOfTheDaemon() {
        let t0 = Date(timeIntervalSince1970: 1_000_000)
        let empty = Histogram(bounds: [1, .infinity], counts: [0, 0])
        let samples = [
            FigureSample(at: t0, completed: 100, failed: 10, wait: empty, run: empty),
            FigureSample(at: t0 + 2, completed: 120, failed: 12, wait: empty, run: empty),
            FigureSample(at: t0 + 4, completed: 6, failed: 0, wait: empty, run: empty),
        ]
        let c = ChartSeries(samples)
        #expect(c.completedPerSecond == [10, 3])
        #expect(c.failedPerSecond == [1, 0])
        #expect(c.wait.map(\.p50) == [nil, nil])
    }

    @Test func historyKeepsFineReadingsAndOneAMinute() {
        var history = FigureHistory(fineCapacity: 3)
        let empty = Histogram(bounds: [], counts: [])
        for i in 0..<10 {
            history.append(FigureSample(at: Date(timeIntervalSince1970: Double(i * 30)), completed: Int64(i), failed: 0,
                                        wait: empty, run: empty))
        }
        #expect(history.samples(.minutes).map(\.completed) == [7, 8, 9])
        #expect(history.samples(.day).map(\.completed) == [0, 2, 4, 6, 8])
    }

    @Test func chartAxisTopsAreRoundNumbers() {
        #expect(SVGChart.niceCeiling(0) == 1)
        #expect(SVGChart.niceCeiling(0.7) == 1)
        #expect(SVGChart.niceCeiling(13) == 20)
        #expect(SVGChart.niceCeiling(230) == 250)
        #expect(SVGChart.niceCeiling(4000) == 5000)
    }

    /// The chart is an image with a text alternative naming the latest values;
    /// a missing value breaks the line instead of dropping to zero.
    @Test func chartsAreLabelledAndBreakAtGaps() {
        let end = Date(timeIntervalSince1970: 1_000_000)
        let chart = SVGChart(title: "Run time", lines: [.init(name: "p50", style: "s1", values: [0.5, nil, 1.0])],
                             times: [end - 600, end - 300, end], end: end, span: 600,
                             format: TimeText.seconds, spanText: "10 min ago")
        let svg = chart.svg.markup
        #expect(svg.contains("role=\"img\""))
        #expect(svg.contains("aria-label=\"Run time: latest p50 1.0 s\""))
        #expect(svg.components(separatedBy: "M").count - 1 == 2, "two pen-downs: the gap breaks the line")
        // Placed by time: the first value at the axis's start, the last at its end.
        #expect(svg.contains("d=\"M56.0 69.0 M592.0 8.0 \""))
    }

    @Test func instantsAreUTCElementsForTheScriptToLocalize() {
        let html = TimeText.element(Date(timeIntervalSince1970: 1_795_000_000))
        #expect(html.markup == "<time datetime=\"2026-11-18T11:06:40Z\" title=\"2026-11-18 11:06:40 UTC\">2026-11-18 11:06:40 UTC</time>")
        #expect(TimeText.element(nil).markup == "–")
        #expect(TimeText.duration(ms: 850) == "850 ms")
        #expect(TimeText.duration(ms: 200_000) == "3 min 20 s")
    }

    @Test func listFiltersBecomeJobsQueries() throws {
        let now = Date(timeIntervalSince1970: 10_000)
        let f = JobsListPage.Filter(state: nil, worker: "w1", action: "echo", since: "1h", cursor: "abc", limit: 100)
        let q = try f.query(failures: true, now: now)
        #expect(q.states == [.failed, .timedOut, .expired])
        #expect(q.worker == "w1" && q.action == "echo" && q.cursor == "abc" && q.limit == 100)
        // A page size that is not offered is the default one.
        #expect(JobsListPage.Filter { $0 == "limit" ? "100000" : nil }.limit == JobsListPage.Filter.defaultLimit)
        #expect(f.link(path: "/failed", cursor: "n") == "/failed?worker=w1&action=echo&since=1h&limit=100&cursor=n")
        #expect(q.submittedSinceUnixMs == Int64(6_400_000))
        #expect(try JobsListPage.Filter(state: "running").query(failures: false).states == [.running])
        #expect(throws: WebError.self) { try JobsListPage.Filter(state: "nonsense").query(failures: false) }
    }

    @Test func listenAddressesParse() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:9477") == .tcp(host: "127.0.0.1", port: 9477))
        #expect(try ListenAddress(parsing: "[::1]:80") == .tcp(host: "::1", port: 80))
        #expect(try ListenAddress(parsing: "unix:/run/loopd-web/http.sock") == .unix("/run/loopd-web/http.sock"))
        for bad in ["9477", "host:0", "host:70000", ":80", "unix:relative"] {
            #expect(throws: WebError.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }
}
