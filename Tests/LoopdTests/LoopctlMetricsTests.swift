import Testing
import LoopdProtocol
@testable import LoopctlCommands

// loopctl metrics: the exposition text as the daemon sent it, nothing added.

@Suite("loopctl metrics")
struct LoopctlMetricsTests {
    @Test("metrics asks for the metrics and prints the text verbatim, ready for a redirect")
    func printsTheTextRaw() throws {
        let metrics: MetricsCommand = try parse(["metrics"])
        #expect(requestLine(metrics) == #"{"id":1,"op":"metrics"}"#)
        let text = "# HELP loopd_connections_open Client connections open now.\n# TYPE loopd_connections_open gauge\nloopd_connections_open 1.0\n"
        let out = try human(metrics, Response.ok(id: .integer(1), [("content_type", "text/plain; version=0.0.4"), ("text", .string(text))]))
        #expect(out == CommandOutput(standardOutput: text))
    }

    @Test("a refusal is exit 5 with nothing on stdout; a reply without text is exit 4")
    func refusalsAndBrokenReplies() throws {
        let metrics: MetricsCommand = try parse(["metrics"])
        let refused = try human(metrics, #"{"id":1,"ok":false,"error":{"code":"unknown_op","message":"unknown op \"metrics\""}}"#)
        #expect(refused.standardOutput.isEmpty)
        #expect(refused.status == .refused)
        #expect(throws: ClientError.self) { try human(metrics, #"{"id":1,"ok":true}"#) }
    }

    @Test("against the daemon: loopctl metrics prints the exposition of the jobs it ran")
    func againstTheDaemon() throws {
        let d = RunningDaemon()
        defer { d.stop() }
        let submitted = Captured()
        #expect(Loopctl.execute(["submit", "--socket", d.socketPath, "--worker", "w2", "echo", "hi"], in: submitted.context()) == .ok)
        let captured = Captured()
        #expect(Loopctl.execute(["metrics", "--socket", d.socketPath], in: captured.context()) == .ok)
        #expect(captured.err.isEmpty)
        #expect(captured.out.hasPrefix("# "))
        #expect(captured.out.contains("\nloopd_jobs_ended_total{action=\"echo\",worker=\"w2\",state=\"completed\"} 1\n"))
        let json = Captured()
        #expect(Loopctl.execute(["metrics", "--json", "--socket", d.socketPath], in: json.context()) == .ok)
        #expect(json.out.hasPrefix(#"{"id":1,"ok":true,"content_type":"#))
    }
}
