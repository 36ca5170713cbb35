import LoopdProtocol

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
}
