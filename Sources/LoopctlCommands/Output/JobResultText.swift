import LoopdProtocol

/// How a job's `result` object is shown: the part a person wants, printed
/// the way the action's own output would be.
enum JobResultText {
    /// Renders `result` into `output`:
    /// - `exec` (`stdout`/`stderr` strings): both verbatim to their streams,
    ///   with a note when the daemon's output cap cut them;
    /// - `echo` (`output`): the text and a newline;
    /// - `{}` (`noop`, `fail`): nothing;
    /// - anything else (`sleep`'s `slept_ms`, embedder actions): aligned pairs.
    static func render(_ result: JSON?, into output: inout CommandOutput) {
        guard let result, case .object(let members) = result, !members.isEmpty else { return }
        let stdout = result["stdout"]?.stringValue
        let stderr = result["stderr"]?.stringValue
        if stdout != nil || stderr != nil {
            output.standardOutput += stdout ?? ""
            output.standardError += stderr ?? ""
            for stream in ["stdout", "stderr"] where result["\(stream)_truncated"]?.boolValue == true {
                output.standardError += "loopctl: the job's \(stream) was cut at the daemon's output cap\n"
            }
            return
        }
        if members.count == 1, let text = result["output"]?.stringValue {
            output.standardOutput += text + "\n"
            return
        }
        output.standardOutput += TextLayout.pairs(members.map { ($0.0, TextLayout.display($0.1)) })
    }
}
