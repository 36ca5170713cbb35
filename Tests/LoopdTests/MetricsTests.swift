import CoreMetrics
import Foundation
import LoopRuntime
import LoopdProtocol
import Testing
@testable import LoopdCore

/// The `metrics` request: its text is the Prometheus exposition of what the
/// daemon did, series by series.
@Suite(.serialized) struct MetricsTests {
    @Test("jobs accepted and ended count by action, worker and end; the time histograms count the jobs that ran")
    func jobCountsByActionWorkerAndEnd() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        for i in 0..<3 {
            #expect(c.call(#"{"id":\#(i),"op":"submit","action":"echo","args":["x"],"worker":"w1"}"#)?["state"] == "completed")
        }
        for i in 0..<2 {
            #expect(c.call(#"{"id":"f\#(i)","op":"submit","action":"fail","args":["no"],"worker":"w2"}"#)?["state"] == "failed")
        }
        #expect(c.call(#"{"id":"t","op":"submit","action":"sleep","args":["30000"],"worker":"w1","timeout_ms":1}"#)?["state"] == "timed_out")
        // Cancelled before it started: it ends, but neither waited nor ran.
        let delayed = try #require(c.call(#"{"id":"d","op":"submit","action":"echo","worker":"w2","wait":false,"delay_ms":600000}"#)?["job"]?.stringValue)
        #expect(c.call(#"{"id":"c","op":"cancel","job":"\#(delayed)"}"#)?["cancelled"] == .bool(true))

        let m = try Exposition(c.call(#"{"id":"m","op":"metrics"}"#))
        #expect(m["loopd_jobs_accepted_total", ["action": "echo", "worker": "w1"]] == 3)
        #expect(m["loopd_jobs_accepted_total", ["action": "fail", "worker": "w2"]] == 2)
        #expect(m["loopd_jobs_accepted_total", ["action": "echo", "worker": "w2"]] == 1)
        #expect(m["loopd_jobs_ended_total", ["action": "echo", "worker": "w1", "state": "completed"]] == 3)
        #expect(m["loopd_jobs_ended_total", ["action": "echo", "worker": "w1", "state": "failed"]] == 0)
        #expect(m["loopd_jobs_ended_total", ["action": "fail", "worker": "w2", "state": "failed"]] == 2)
        #expect(m["loopd_jobs_ended_total", ["action": "sleep", "worker": "w1", "state": "timed_out"]] == 1)
        #expect(m["loopd_jobs_ended_total", ["action": "echo", "worker": "w2", "state": "cancelled"]] == 1)
        #expect(m["loopd_job_run_seconds_count", ["action": "echo", "worker": "w1"]] == 3)
        #expect(m["loopd_job_run_seconds_count", ["action": "fail", "worker": "w2"]] == 2)
        #expect(m["loopd_job_run_seconds_count", ["action": "sleep", "worker": "w1"]] == 1)
        #expect(m["loopd_job_run_seconds_count", ["action": "echo", "worker": "w2"]] == 0)
        #expect(m["loopd_job_run_seconds_bucket", ["action": "echo", "worker": "w1", "le": "+Inf"]] == 3)
        #expect(m["loopd_job_wait_seconds_count", ["worker": "w1"]] == 4)
        #expect(m["loopd_job_wait_seconds_count", ["worker": "w2"]] == 2)
        // The timed-out sleep ran at least until its 1 ms timeout.
        #expect((m["loopd_job_run_seconds_sum", ["action": "sleep", "worker": "w1"]] ?? 0) >= 0.001)
        #expect(m.types["loopd_jobs_accepted_total"] == "counter")
        #expect(m.types["loopd_job_wait_seconds"] == "histogram")
        #expect(m.types["loopd_worker_queued_jobs"] == "gauge")
    }

    @Test("the worker gauges show each worker's waiting, held and running jobs when asked")
    func workerQueuesHeldAndRunning() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        #expect(c.call(#"{"id":1,"op":"mode","worker":"w1","mode":"maintenance"}"#)?.ok == true)
        for i in 0..<2 {
            #expect(c.call(#"{"id":"h\#(i)","op":"submit","action":"echo","worker":"w1","wait":false}"#)?.ok == true)
        }
        let slow = try #require(c.call(#"{"id":"s","op":"submit","action":"sleep","args":["600000"],"worker":"w2","wait":false}"#)?["job"]?.stringValue)
        #expect(c.waitForState(slow, "running") == "running")
        #expect(c.call(#"{"id":"q","op":"submit","action":"echo","worker":"w2","wait":false}"#)?.ok == true)

        let m = try Exposition(c.call(#"{"id":"m","op":"metrics"}"#))
        #expect(m["loopd_worker_queued_jobs", ["worker": "w1"]] == 2)
        #expect(m["loopd_worker_held_jobs", ["worker": "w1"]] == 2)
        #expect(m["loopd_worker_running_jobs", ["worker": "w1"]] == 0)
        #expect(m["loopd_worker_queued_jobs", ["worker": "w2"]] == 1)
        #expect(m["loopd_worker_held_jobs", ["worker": "w2"]] == 0)
        #expect(m["loopd_worker_running_jobs", ["worker": "w2"]] == 1)
        #expect(m["loopd_worker_loop_stall_seconds", ["worker": "w1"]] == 0)

        #expect(c.call(#"{"id":"x","op":"cancel","job":"\#(slow)"}"#)?["cancelled"] == .bool(true))
        #expect(c.call(#"{"id":2,"op":"mode","worker":"w1","mode":"default"}"#)?.ok == true)
        var after = try Exposition(c.call(#"{"id":"m2","op":"metrics"}"#))
        waitUntil {
            after = (try? Exposition(c.call(#"{"id":"m3","op":"metrics"}"#))) ?? after
            return after["loopd_worker_queued_jobs", ["worker": "w1"]] == 0
        }
        #expect(after["loopd_worker_queued_jobs", ["worker": "w1"]] == 0)
        #expect(after["loopd_worker_held_jobs", ["worker": "w1"]] == 0)
        #expect(after["loopd_jobs_ended_total", ["action": "echo", "worker": "w1", "state": "completed"]] == 2)
    }

    @Test("the journal's commits, bytes written and one fsync time per commit")
    func journalCommitsBytesAndFsync() throws {
        let d = RunningDaemon(configure: { $0.journal.fsync = true })
        defer { d.stop() }
        let c = try d.client()
        for i in 0..<3 {
            #expect(c.call(#"{"id":\#(i),"op":"submit","action":"echo","args":["x"],"durable":true}"#)?["state"] == "completed")
        }
        // The jobs' finish records may still be committing: the size
        // lies between what `stats` says before and after.
        let before = try #require(c.call(#"{"id":"s","op":"stats"}"#)?["journal"]?["bytes"]?.integerValue)
        let m = try Exposition(c.call(#"{"id":"m","op":"metrics"}"#))
        let after = try #require(c.call(#"{"id":"s2","op":"stats"}"#)?["journal"]?["bytes"]?.integerValue)
        let commits = try #require(m["loopd_journal_commits_total"])
        #expect(commits >= 3)  // one per durable submit at least (each waited for its commit)
        #expect(m["loopd_journal_fsync_seconds_count"] == commits)
        #expect((m["loopd_journal_written_bytes_total"] ?? 0) > 0)
        let size = try #require(m["loopd_journal_size_bytes"])
        #expect(Double(before) <= size && size <= Double(after))
    }

    @Test("connections open now and accepted since the start")
    func connections() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let a = try d.client(), b = try d.client()
        #expect(b.call(#"{"id":1,"op":"ping"}"#)?.ok == true)
        let m = try Exposition(a.call(#"{"id":"m","op":"metrics"}"#))
        #expect(m["loopd_connections_open"] == 2)
        #expect(m["loopd_connections_accepted_total"] == 2)
    }

    @Test("two daemons in one process report their own jobs, not each other's")
    func eachDaemonItsOwnRegistry() throws {
        let one = RunningDaemon(), two = RunningDaemon()
        defer {
            one.stop()
            two.stop()
        }
        let c1 = try one.client(), c2 = try two.client()
        #expect(c1.call(#"{"id":1,"op":"submit","action":"echo","worker":"w1"}"#)?["state"] == "completed")
        let m1 = try Exposition(c1.call(#"{"id":"m","op":"metrics"}"#))
        let m2 = try Exposition(c2.call(#"{"id":"m","op":"metrics"}"#))
        #expect(m1["loopd_jobs_accepted_total", ["action": "echo", "worker": "w1"]] == 1)
        #expect(m2["loopd_jobs_accepted_total", ["action": "echo", "worker": "w1"]] == nil)
    }

    @Test("an embedder's action counts through swift-metrics into the daemon's own metrics")
    func embedderMetricsThroughSwiftMetrics() throws {
        let d = RunningDaemon(register: { daemon in
            daemon.register(action: CountingAction(factory: daemon.metricsFactory), named: "count")
        })
        defer { d.stop() }
        let c = try d.client()
        for i in 0..<4 { #expect(c.call(#"{"id":\#(i),"op":"submit","action":"count"}"#)?["state"] == "completed") }
        let m = try Exposition(c.call(#"{"id":"m","op":"metrics"}"#))
        #expect(m["embedder_widgets_total", ["kind": "blue"]] == 4)
        #expect(m["loopd_jobs_ended_total", ["action": "count", "worker": "w1", "state": "completed"]]
            .map { $0 + (m["loopd_jobs_ended_total", ["action": "count", "worker": "w2", "state": "completed"]] ?? 0) } == 4)
    }

    @Test("the reply carries the text as one JSON string and says its media type")
    func replyShape() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let c = try d.client()
        let line = try #require(c.call(#"{"id":"m","op":"metrics"}"#))
        #expect(line["ok"] == .bool(true))
        #expect(line["id"] == "m")
        #expect(line["content_type"] == "text/plain; version=0.0.4; charset=utf-8")
        let text = try #require(line["text"]?.stringValue)
        #expect(text.hasSuffix("\n"))
        #expect(c.call(#"{"id":"bad","op":"metrics","extra":1}"#)?["error"]?["code"] == "bad_request")
    }
}

/// An embedder's action that counts each run in a swift-metrics counter
/// made by the daemon's factory.
private struct CountingAction: JobAction {
    let counter: CoreMetrics.Counter

    init(factory: any MetricsFactory) {
        counter = CoreMetrics.Counter(label: "embedder_widgets_total", dimensions: [("kind", "blue")], factory: factory)
    }

    func start(_ context: ActionContext) {
        counter.increment()
        context.complete(.success(.object([])))
    }
}

/// A `metrics` reply's exposition, read into samples: enough of the text
/// format to look series up by name and labels.
struct Exposition {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var samples: [Sample] = []
    /// `# TYPE` of each family.
    var types: [String: String] = [:]

    init(_ reply: JSON?) throws {
        let text = try #require(reply?["text"]?.stringValue, "no text in \(String(describing: reply))")
        try self.init(text: text)
    }

    init(text: String) throws {
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            if line.hasPrefix("#") { continue }
            let space = try #require(line.lastIndex(of: " "))
            let series = line[..<space]
            let value = try #require(Double(line[line.index(after: space)...]), "\(line)")
            var labels: [String: String] = [:]
            var name = Substring(series)
            if let brace = series.firstIndex(of: "{") {
                name = series[..<brace]
                let body = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                // Label values here hold no quotes, commas or escapes.
                for pair in body.split(separator: ",") {
                    let kv = pair.split(separator: "=", maxSplits: 1)
                    labels[String(kv[0])] = String(kv[1].dropFirst().dropLast())
                }
            }
            samples.append(Sample(name: String(name), labels: labels, value: value))
        }
    }

    subscript(name: String, labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }
}

/// The job time histograms keep their own counts: an observation lands in
/// the first bucket at or above it, the text adds them up as Prometheus's
/// `le` says, and labels are escaped as the exposition format asks.
@Suite struct JobTimeHistogramTests {
    @Test func observationsAreCountedInEveryBucketAtOrAboveThemAndRendered() {
        let h = JobTimeHistogram(labels: JobTimeHistogram.exposition(of: [("action", "a\"b\\c\nd"), ("worker", "w1")]))
        for ns: UInt64 in [0, 10_000, 10_001, 61_000_000_000] { h.record(nanoseconds: ns) }
        var out: [UInt8] = []
        h.render(name: "x", into: &out)
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n").map(String.init)
        let labels = #"action="a\"b\\c\nd",worker="w1""#
        #expect(lines.count == DaemonMetrics.jobSecondsBuckets.count + 3)
        #expect(lines.first == "x_bucket{\(labels),le=\"1e-05\"} 2", "0 and exactly 10 µs")
        #expect(lines[1] == "x_bucket{\(labels),le=\"5e-05\"} 3")
        #expect(lines.contains("x_bucket{\(labels),le=\"60.0\"} 3"), "61 s is above the last bound")
        #expect(lines.contains("x_bucket{\(labels),le=\"+Inf\"} 4"))
        #expect(lines.contains("x_sum{\(labels)} \((61_000_020_001.0 / 1e9).description)"))
        #expect(lines.last == "x_count{\(labels)} 4")
    }

    @Test func aFamilyKeepsOneSeriesPerLabelSet() {
        let family = JobTimeHistogramFamily(descriptor: DaemonMetrics.name("job", "wait", "seconds", "Help."))
        let a = family.series([("worker", "w1")])
        #expect(family.series([("worker", "w1")]) === a)
        #expect(family.series([("worker", "w2")]) !== a)
        var out: [UInt8] = []
        family.render(into: &out)
        let text = String(decoding: out, as: UTF8.self)
        #expect(text.hasPrefix("# HELP loopd_job_wait_seconds Help.\n# TYPE loopd_job_wait_seconds histogram\n"))
        #expect(text.components(separatedBy: "_count{").count == 3, "two series")
    }
}
