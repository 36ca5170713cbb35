import LoopdProtocol

/// Where a finished job's reply goes: the connection's shared write side and
/// the id of the `submit` request that waits.
struct DirectReply: Sendable {
    let channel: ReplyChannel
    let requestID: RequestID?
}

extension Job {
    /// Appends the fields of `replyFields(includeDetails: false)`, in its
    /// order, the way `Response.ok(id:_:into:)` writes them, without
    /// building the list: every acknowledged or finished job is answered
    /// with these.
    func writeReplyFields(into out: inout [UInt8]) {
        Response.field("job", id, into: &out)
        Response.field("state", visibleState.rawValue, into: &out)
        Response.field("worker", worker.name, into: &out)
        if let result { Response.field("result", result, into: &out) }
    }

    /// The reply to the waiting `submit` of a job its worker ran to the end,
    /// as the main thread would write it once it recorded `outcome`: built
    /// from the outcome and the job's immutable fields, so a worker can
    /// write it. Any thread.
    func writeFinalReply(_ outcome: ActionOutcome, requestID: RequestID?, into out: inout [UInt8]) {
        switch outcome {
        case .success(let result):
            Response.beginOK(id: requestID, into: &out)
            Response.field("job", id, into: &out)
            Response.field("state", JobState.completed.rawValue, into: &out)
            Response.field("worker", worker.name, into: &out)
            Response.field("result", result, into: &out)
            Response.end(into: &out)
        case .failure(let error, let result):
            let fields: [(String, JSON)] = [("job", .string(id)), ("state", .string(JobState.failed.rawValue)),
                                            ("worker", .string(worker.name)), ("result", result)]
            Response.error(id: requestID, error, fields, into: &out)
        }
    }
}
