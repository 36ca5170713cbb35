import LoopdClient

/// How `submit` and `wait` report a job that has ended: its result as the
/// action would print it, and, when it did not complete, one diagnostic
/// line and the exit status that tells how it ended.
enum FinishedJob {
    /// Output and status for the reply that reports job `job`'s end: `ok`
    /// with its result, or `ok:false` with the job's fields and an error.
    static func output(_ reply: RawReply, job: String) -> CommandOutput {
        var output = CommandOutput()
        JobResultText.render(reply.json["result"], into: &output)
        if !reply.ok {
            let state = reply.json["state"]?.stringValue ?? "failed"
            output.diagnostic = "loopctl: job \(job) \(state): \(reply.errorCode ?? "error"): \(reply.errorMessage)"
            output.status = status(errorCode: reply.errorCode ?? "", result: reply.json["result"])
        }
        return output
    }

    /// The exit status for a job that ended with `errorCode` and `result`:
    /// - `job_failed`: the exec child's own exit status, or 128 + the signal
    ///   that killed it; 1 when there is neither (a built-in action's
    ///   failure, a child that could not start);
    /// - `timeout`: 124; `cancelled`: 125; `expired`: 8;
    /// - any other code is a refusal (a durable job whose journal write
    ///   failed, a code this loopctl does not know): 5.
    static func status(errorCode: String, result: JSON?) -> ExitStatus {
        switch ErrorCode(rawValue: errorCode) {
        case .jobFailed?:
            if let status = result?["exit_code"]?.integerValue { return .child(exitStatus: status) }
            if let signal = result?["signal"]?.integerValue { return .child(signal: signal) }
            return .jobFailed
        case .timeout?:
            return .jobTimedOut
        case .cancelled?:
            return .jobCancelled
        case .expired?:
            return .jobExpired
        default:
            return .refused
        }
    }
}
