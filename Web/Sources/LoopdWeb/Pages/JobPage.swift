import Foundation
import LoopdClient

/// `/jobs/ID`: everything `status` tells of one job, and what an operator
/// may do to it.
enum JobPage {
    static func live(_ j: JobStatus, context: PageContext, owner: String?) -> HTML {
        var fields: [(String, HTML)] = [
            ("State", Layout.state(j.state)), ("Action", "\(j.action ?? "–")"), ("Worker", "\(j.worker ?? "–")"),
            ("Arguments", j.args.map { args in
                args.isEmpty ? "none" : "<ol class=\"args\">\(args.map { a -> HTML in "<li><code>\(a)</code></li>" })</ol>"
            } ?? "–"),
            ("Submitted by", j.submittedBy.map { uid in owner.map { "\($0) (uid \(uid))" } ?? "uid \(uid)" } ?? "–"),
            ("Submitted", TimeText.element(j.submittedAt)), ("Started", TimeText.element(j.startedAt)),
            ("Finished", TimeText.element(j.finishedAt)),
            ("Waited", "\(j.queueMs.map { TimeText.duration(ms: $0) } ?? "–")"),
            ("Ran", "\(j.runMs.map { TimeText.duration(ms: $0) } ?? "–")"),
            ("Attempt", j.retries > 0 ? "\(j.attempt) of \(j.retries + 1)" : "\(j.attempt)"),
            ("Durable", j.durable ? "yes" : "no"),
        ]
        if let e = j.error { fields.append(("Error", "<code>\(e.code.description)</code> \(e.message)")) }
        if let uid = j.cancelledBy { fields.append(("Cancelled by", "uid \(uid)")) }
        if let u = j.usage {
            fields.append(("CPU", "\(String(format: "%.3f s user, %.3f s system", Double(u.cpuUserUsec) / 1e6, Double(u.cpuSystemUsec) / 1e6))"))
        }
        if let r = j.retryOf { fields.append(("Retry of", Layout.jobLink(r))) }
        if let r = j.retriedAs { fields.append(("Retried as", Layout.jobLink(r))) }
        let dl: [HTML] = fields.map { "<div><dt>\($0.0)</dt><dd>\($0.1)</dd></div>" }
        var actions: [HTML] = []
        let path = "/jobs/\(percentEncoded(j.job))"
        if !j.state.isFinal { actions.append(Layout.button("Cancel", action: path + "/cancel", context: context, danger: true)) }
        if j.state.isFailure && j.retriedAs == nil { actions.append(Layout.button("Retry", action: path + "/retry", context: context)) }
        let actionBlock: HTML = actions.isEmpty || !context.loggedIn ? "" : "<div class=\"actions\">\(actions)</div>"
        let attempts: HTML = j.attempts.isEmpty ? "" : Layout.table(
            caption: "Failed attempts", head: ["Attempt", "Error", "Message", "Ended"],
            rows: j.attempts.map { a in "<tr><td>\(a.attempt)</td><td><code>\(a.code)</code></td><td>\(a.message)</td><td>\(TimeText.element(a.finishedAt))</td></tr>" },
            empty: "")
        return "\(actionBlock)<dl class=\"fields\">\(dl)</dl>\(output(j))\(attempts)"
    }

    /// The result: an exec job's output streams as text, anything else as JSON.
    static func output(_ j: JobStatus) -> HTML {
        guard let result = j.result else { return "<section><h2>Result</h2><p class=\"empty\">None yet.</p></section>" }
        var parts: [HTML] = []
        for key in ["output", "stdout", "stderr"] {
            if let text = result[key]?.stringValue {
                parts.append("<h3>\(key)</h3><pre class=\"output\">\(text)</pre>")
            }
        }
        parts.append("<details\(parts.isEmpty ? HTML(" open") : "")><summary>Result as JSON</summary><pre class=\"output\">\(result.serialized())</pre></details>")
        return "<section><h2>Result</h2>\(parts)</section>"
    }
}
