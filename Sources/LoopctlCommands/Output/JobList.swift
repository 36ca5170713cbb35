import LoopdClient

/// One page of a `jobs` reply as loopctl shows it (the jobs as the daemon
/// wrote them, not the library's typed `JobsPage`), and the table
/// `loopctl jobs` prints.
struct JobList {
    /// The jobs, oldest submission first, as the daemon described them.
    var jobs: [JSON]
    /// Where the next page starts; nil when this is the last.
    var nextCursor: String?

    /// Reads an `ok` reply; one without the `jobs` array, or with a
    /// `next_cursor` that is neither a string nor null, is a protocol error.
    init(_ reply: RawReply) throws(ClientError) {
        guard let jobs = reply.json["jobs"]?.arrayValue else {
            throw .protocol("jobs reply lacks the array \"jobs\": \(reply.line)")
        }
        self.jobs = jobs
        switch reply.json["next_cursor"] {
        case nil, .null?: nextCursor = nil
        case .string(let cursor)?: nextCursor = cursor
        case let other?: throw .protocol("jobs reply has a \"next_cursor\" that is \(other.typeName), not a string or null")
        }
    }

    /// The jobs as a table: JOB, STATE, WORKER, ACTION, SUBMITTED (as the
    /// daemon wrote it, UTC), QUEUE and RUN (durations); "-" for what the
    /// daemon does not know (yet). PRI (the priority) follows ACTION when
    /// a job listed has a priority other than the default.
    static func table(_ jobs: [JSON]) -> String {
        let showsPriority = jobs.contains {
            $0["priority"]?.integerValue.map { $0 != Int64(SubmitRequest.defaultPriority) } ?? false
        }
        let rows = jobs.map { job in
            var row = [text(job["job"]), text(job["state"]), text(job["worker"]), text(job["action"])]
            if showsPriority { row.append(job["priority"]?.integerValue.map { String($0) } ?? "-") }
            row += [text(job["submitted_at"]), duration(job["queue_ms"]), duration(job["run_ms"])]
            return row
        }
        var header = ["JOB", "STATE", "WORKER", "ACTION", "SUBMITTED", "QUEUE", "RUN"]
        var alignments: [TextLayout.Alignment] = [.left, .left, .left, .left, .left, .right, .right]
        if showsPriority {
            header.insert("PRI", at: 4)
            alignments.insert(.right, at: 4)
        }
        return TextLayout.table(header: header, alignments: alignments, rows: rows)
    }

    private static func text(_ value: JSON?) -> String { value?.stringValue ?? "-" }

    private static func duration(_ value: JSON?) -> String {
        value?.integerValue.map { TextLayout.duration(milliseconds: $0) } ?? "-"
    }
}
