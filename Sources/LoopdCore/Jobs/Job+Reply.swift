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
        writeReplyFields(state: visibleState, result: result, into: &out)
    }

    /// `writeReplyFields(into:)` for a given state and result. Any thread.
    private func writeReplyFields(state: JobState, result: JSON?, into out: inout [UInt8]) {
        Response.field("job", id, into: &out)
        Response.field("state", state.rawValue, into: &out)
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
            writeReplyFields(state: .completed, result: result, into: &out)
            Response.end(into: &out)
        case .failure(let error, let result):
            Response.error(id: requestID, error, replyFields(state: .failed, result: result), into: &out)
        }
    }
}
