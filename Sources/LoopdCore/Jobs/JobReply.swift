import LoopdProtocol

/// The one encoder of a job's reply to a request about it: a `submit`'s
/// acknowledgement or end, a `wait`'s answer. The worker that ran a job and
/// the main thread both write through here, so the bytes cannot differ by
/// who wrote them.
enum JobReply {
    /// Appends the reply line for `job` in `state`: `ok` with the job's
    /// fields (`job`, `state`, `worker`, and `result` when given), or, with
    /// an `error`, that error with the same fields beside it. Any thread:
    /// it reads only the job's immutable fields.
    ///
    /// A job with `retries` also carries `attempt` (the attempt it is on, or
    /// ended on); `duplicate` marks the reply to a submit whose `unique_key`
    /// named this job.
    static func write(_ job: Job, state: JobState, result: JSON?, error: ProtocolError?, usage: JobUsage? = nil,
                      requestID: RequestID?, duplicate: Bool = false, into out: inout some ByteOutput) {
        let attempt: Int64? = job.retries > 0 ? Int64(job.attempt) : nil
        if let error {
            var fields: [(String, JSON)] = [("job", .string(job.id)), ("state", .string(state.rawValue)),
                                            ("worker", .string(job.worker.name))]
            if let result { fields.append(("result", result)) }
            if let usage { fields.append(("usage", usage.json)) }
            if let attempt { fields.append(("attempt", .integer(attempt))) }
            if duplicate { fields.append(("duplicate", true)) }
            Response.error(id: requestID, error, fields, into: &out)
            return
        }
        Response.beginOK(id: requestID, into: &out)
        Response.field("job", job.id, into: &out)
        Response.field("state", plain: state.literal, into: &out)
        Response.field("worker", job.worker.name, into: &out)
        if let result { Response.field("result", result, into: &out) }
        if let usage { Response.field("usage", usage.json, into: &out) }
        if let attempt { Response.field("attempt", .integer(attempt), into: &out) }
        if duplicate { Response.field("duplicate", true, into: &out) }
        Response.end(into: &out)
    }

    /// The reply to a request that waited for `job`, which ended with `outcome`.
    static func write(_ job: Job, endedWith outcome: ActionOutcome, usage: JobUsage? = nil, requestID: RequestID?,
                      duplicate: Bool = false, into out: inout some ByteOutput) {
        let state = Job.End(outcome).protocolState
        switch outcome {
        case .success(let result):
            write(job, state: state, result: result, error: nil, usage: usage, requestID: requestID, duplicate: duplicate,
                  into: &out)
        case .failure(let error, let result):
            write(job, state: state, result: result, error: error, usage: usage, requestID: requestID,
                  duplicate: duplicate, into: &out)
        }
    }

    /// The reply for `job` as the main thread knows it now: its end once
    /// recorded, else its visible state. Main thread.
    static func write(current job: Job, requestID: RequestID?, duplicate: Bool = false, into out: inout [UInt8]) {
        write(job, state: job.visibleState(), result: job.result, error: job.error, usage: job.usage,
              requestID: requestID, duplicate: duplicate, into: &out)
    }
}
