/// The `jobs` request's filters and page (docs/PROTOCOL.md, "jobs").
extension RequestDecoder {
    static func jobs(_ f: inout RequestFields) throws(ProtocolError) -> JobsQuery {
        var q = JobsQuery()
        q.states = try states(f.optionalValue("state"))
        q.worker = try f.optionalName("worker")
        q.action = try f.optionalName("action")
        if let since = try f.optionalString("since") {
            guard let ms = Timestamp.parse(since) else {
                throw ProtocolError(.badRequest, "\"since\" must be an RFC 3339 time such as 2026-11-24T07:01:02.345Z or 2026-11-24T08:01:02+01:00")
            }
            q.submittedSinceUnixMs = ms
        }
        if let limit = try f.optionalInteger("limit", in: 1...Int64(JobsQuery.maxLimit)) { q.limit = Int(limit) }
        if let cursor = try f.optionalString("cursor") {
            guard !cursor.isEmpty, cursor.utf8.count <= JobsQuery.maxCursorBytes else {
                throw ProtocolError(.badRequest, "\"cursor\" must be 1 to \(JobsQuery.maxCursorBytes) bytes")
            }
            q.cursor = cursor
        }
        q.fleet = try f.optionalBool("fleet") ?? false
        q.withFleet = try f.optionalBool("with_fleet") ?? false
        if q.fleet && q.withFleet {
            throw ProtocolError(.badRequest, "\"fleet\" lists the fleet's jobs alone, \"with_fleet\" this host's and the fleet's: give one")
        }
        return q
    }

    /// `retry` and `discard`: `job`, or the filters of `jobs` (final states
    /// only, the failures by default; a limit, no cursor).
    static func endedJobs(_ f: inout RequestFields, op: String) throws(ProtocolError) -> EndedJobs {
        if let job = try f.optionalName("job") {
            for key in ["state", "worker", "action", "since", "limit", "cursor"] where f.has(key) {
                throw ProtocolError(.badRequest, "give \"job\" or filters, not both: \"\(key)\" with \"job\"")
            }
            return .job(job)
        }
        guard !f.has("cursor") else { throw ProtocolError(.badRequest, "\"\(op)\" takes no \"cursor\": repeat it until none is left") }
        for key in ["fleet", "with_fleet"] where f.has(key) {
            throw ProtocolError(.badRequest, "\"\(op)\" is about this host's jobs: it takes no \"\(key)\"")
        }
        var q = try jobs(&f)
        if let states = q.states {
            for s in states where !s.isFinal {
                throw ProtocolError(.badRequest, "\"\(op)\" is about ended jobs; \"\(s.rawValue)\" is not an end state")
            }
        } else {
            q.states = JobState.failures
        }
        return .matching(q)
    }

    /// `"state"`: one state name, or an array of 1 to `JobsQuery.maxStates`
    /// different ones.
    private static func states(_ value: JSON?) throws(ProtocolError) -> [JobState]? {
        switch value {
        case nil:
            return nil
        case .string(let name)?:
            return [try state(name)]
        case .array(let items)?:
            guard (1...JobsQuery.maxStates).contains(items.count) else {
                throw ProtocolError(.badRequest, "\"state\" has \(items.count) items; 1 to \(JobsQuery.maxStates)")
            }
            var states: [JobState] = []
            for (k, item) in items.enumerated() {
                guard let name = item.stringValue else {
                    throw ProtocolError(.badRequest, "\"state\"[\(k)] must be a state name, not \(item.typeName)")
                }
                let s = try state(name)
                guard !states.contains(s) else { throw ProtocolError(.badRequest, "\"state\" names \"\(name)\" twice") }
                states.append(s)
            }
            return states
        case let other?:
            throw ProtocolError(.badRequest, "\"state\" must be a state name or an array of them, not \(other.typeName)")
        }
    }

    private static func state(_ name: String) throws(ProtocolError) -> JobState {
        guard let s = JobState(rawValue: name) else {
            let known = JobState.allCases.map(\.rawValue).joined(separator: ", ")
            throw ProtocolError(.badRequest, "unknown state \"\(name)\" (states: \(known))")
        }
        return s
    }
}
