import LoopdProtocol

/// One row of `loopd.jobs` as the requests show it.
struct FleetJobRow {
    static let select = "SELECT \(columns) FROM loopd.jobs WHERE id = $1"

    /// What `FleetJobRow(_:_:)` reads.
    static let columns = """
        id, state, action, args, owner_name, owner_uid, submitted_node, worker, node, mode, priority, retries,
               attempt, claimed_by, lane, key, unique_key, result::text AS result, error_code, error_message, attempts::text AS attempts,
               (extract(epoch FROM submitted_at) * 1000)::bigint AS submitted_ms,
               (extract(epoch FROM started_at) * 1000)::bigint AS started_ms,
               (extract(epoch FROM finished_at) * 1000)::bigint AS finished_ms,
               (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms,
               (extract(epoch FROM run_at) * 1000)::bigint AS run_ms
        """

    let id: String
    let state: String
    let action: String
    let args: [String]
    let ownerName: String
    /// The owner's uid on the node it was submitted to; nil for one `loopd.submit_job` inserted.
    let ownerUID: UInt32?
    let submittedNode: String
    /// The worker that ran its last attempt, else the one it asked for.
    let worker: String?
    let pinnedNode: String?
    let ranOn: String?
    let key: String?
    let uniqueKey: String?
    let priority: Int64
    let retries: Int64
    let attempt: Int64
    let result: JSON?
    let error: ProtocolError?
    let attempts: JSON?
    let submittedMs: Int64
    let startedMs: Int64?
    let finishedMs: Int64?
    let expiresMs: Int64?

    init(_ rows: PostgresRows, _ row: Int) {
        func text(_ c: String) -> String? { rows.value(row, c) }
        func integer(_ c: String) -> Int64? { rows.integer(row, c) }
        func json(_ c: String) -> JSON? { text(c).flatMap { try? JSONParser.parse(Array($0.utf8)) } }
        id = FleetJobID.text(integer("id") ?? 0)
        state = text("state") ?? ""
        action = text("action") ?? ""
        args = PostgresArray.parseText(text("args") ?? "{}")
        ownerName = text("owner_name") ?? ""
        ownerUID = integer("owner_uid").map { UInt32(clamping: $0) }
        submittedNode = text("submitted_node") ?? ""
        worker = text("lane") ?? text("worker")
        pinnedNode = text("node")
        ranOn = text("claimed_by")
        key = text("key")
        uniqueKey = text("unique_key")
        priority = integer("priority") ?? 0
        retries = integer("retries") ?? 0
        attempt = integer("attempt") ?? 0
        result = json("result")
        if let code = text("error_code") {
            error = ProtocolError(ErrorCode(rawValue: code) ?? .jobFailed, text("error_message") ?? "")
        } else {
            error = nil
        }
        attempts = json("attempts")
        submittedMs = integer("submitted_ms") ?? 0
        startedMs = integer("started_ms")
        finishedMs = integer("finished_ms")
        expiresMs = integer("expires_ms")
    }

    var hasEnded: Bool { state != "queued" && state != "running" }

    /// `status`'s fields: a local job's, plus where it was submitted and ran.
    var statusFields: [(String, JSON)] {
        var f: [(String, JSON)] = [
            ("job", .string(id)), ("state", .string(state)), ("fleet", true), ("action", .string(action)),
            ("args", .array(args.map { .string($0) })), ("priority", .integer(priority)),
            ("owner", .string(ownerName)), ("submitted_on", .string(submittedNode)),
        ]
        if let ownerUID { f.append(("submitted_by", .integer(Int64(ownerUID)))) }
        if let worker { f.append(("worker", .string(worker))) }
        if let pinnedNode { f.append(("pinned_node", .string(pinnedNode))) }
        if let key { f.append(("key", .string(key))) }
        if let uniqueKey { f.append(("unique_key", .string(uniqueKey))) }
        if let ranOn { f.append(("node", .string(ranOn))) }
        if let expiresMs { f.append(("expires_at", .string(Timestamp.format(unixMilliseconds: expiresMs)))) }
        JobStatus.times(submitted: submittedMs, started: startedMs, ended: finishedMs, into: &f)
        if hasEnded, let result { f.append(("result", result)) }
        if hasEnded, let error { f.append(("error", error.json)) }
        f.append(("attempt", .integer(attempt)))
        if retries > 0 { f.append(("retries", .integer(retries))) }
        if let list = attempts?.arrayValue, !list.isEmpty { f.append(("attempts", .array(list))) }
        return f
    }

    /// A `jobs` entry: `status`'s fields but the result, the arguments and the attempts.
    var listFields: [(String, JSON)] {
        statusFields.filter { !["result", "args", "attempts"].contains($0.0) }
    }

    /// A `submit` or `wait` reply before the end: the job's state now.
    var replyFields: [(String, JSON)] {
        var f: [(String, JSON)] = [("job", .string(id)), ("state", .string(state)), ("fleet", true)]
        if let worker { f.append(("worker", .string(worker))) }
        if let ranOn { f.append(("node", .string(ranOn))) }
        return f
    }
}

extension EndedJobView {
    /// A fleet job that ended, as the row holds it: its replies read as a
    /// local job's, with where it ran beside them.
    init(_ row: FleetJobRow) {
        id = row.id
        state = row.state
        worker = row.worker
        action = row.action
        durable = true
        submittedAt = row.submittedMs
        startedAt = row.startedMs
        finishedAt = row.finishedMs ?? row.submittedMs
        result = row.result
        error = row.error
        attempt = Int(row.attempt)
        retries = Int(row.retries)
        uniqueKey = row.uniqueKey
        placement = [("fleet", true)]
        if let node = row.ranOn { placement.append(("node", .string(node))) }
    }
}
