/// Limits the decoder enforces on values, beyond JSON syntax.
public enum RequestLimits {
    /// The longest delay a job may ask for: one day.
    public static let maxDelayMs: Int64 = 86_400_000
    /// The longest timeout a job may ask for: one day.
    public static let maxTimeoutMs: Int64 = 86_400_000
    /// The longest `expires_in_ms` the protocol accepts: seven days (the
    /// daemon's `limits.max_expires_in_ms` may lower it).
    public static let maxExpiresInMs: Int64 = 604_800_000
    /// The longest a `wait` may wait: one day.
    public static let maxWaitMs: Int64 = 86_400_000
    /// At most this many arguments.
    public static let maxArgs = 256
    /// Names (actions, workers, modes, keys, job ids) are at most this long.
    public static let maxNameLength = 256
}

/// Turns one request line into a `Request`, or a `ProtocolError` that says
/// exactly what is wrong. Strict: unknown fields and wrong types are errors,
/// so a client's typo never silently changes what runs.
public enum RequestDecoder {
    /// Decodes a line (without its newline). On failure, also returns the id
    /// if one could be read, so the error reply can carry it.
    ///
    /// Plain valid requests are read in one pass over the bytes
    /// (`decodeOnePass`); everything else goes to `decodeGeneric`, which
    /// builds the `JSON` tree and judges it. Both give the same answer.
    public static func decode(_ line: some Collection<UInt8>) -> Result<Request, DecodeFailure> {
        if let request = line.withContiguousStorageIfAvailable(decodeOnePass) ?? nil {
            return .success(request)
        }
        return decodeGeneric(line)
    }

    /// `decode` for a line in an array's storage (a server's read buffer):
    /// the same answer, with the one-pass decoder's request handed back
    /// directly rather than through a generic collection's storage call.
    public static func decode(_ line: ArraySlice<UInt8>) -> Result<Request, DecodeFailure> {
        var request = Request(id: nil, operation: .ping)
        if let failure = decode(line, into: &request) { return .failure(failure) }
        return .success(request)
    }

    /// `decode` that writes the request into `request` and returns nil, or
    /// returns the failure: what a server calls for each line it reads, so
    /// that a submit's large request is made where it is used, not copied
    /// out through a result.
    public static func decode(_ line: ArraySlice<UInt8>, into request: inout Request) -> DecodeFailure? {
        if line.withUnsafeBufferPointer({ decodeOnePass($0, into: &request) }) { return nil }
        switch decodeGeneric(line) {
        case .success(let decoded):
            request = decoded
            return nil
        case .failure(let failure):
            return failure
        }
    }

    /// Decodes a line through a `JSON` tree: the reference decoder, which
    /// gives every refusal its message.
    public static func decodeGeneric(_ line: some Collection<UInt8>) -> Result<Request, DecodeFailure> {
        let json: JSON
        do {
            json = try JSONParser.parse(line)
        } catch {
            return .failure(DecodeFailure(id: nil, error: ProtocolError(.badRequest, error.description)))
        }
        guard case .object(let members) = json else {
            return .failure(DecodeFailure(id: nil, error: ProtocolError(.badRequest, "a request is a JSON object, not \(json.typeName)")))
        }
        var id: RequestID?
        if let raw = json["id"] {
            switch raw {
            case .string(let s) where s.utf8.count <= RequestLimits.maxNameLength: id = .string(s)
            case .integer(let n): id = .integer(n)
            default:
                return .failure(DecodeFailure(id: nil, error: ProtocolError(.badRequest, "\"id\" must be a string of at most \(RequestLimits.maxNameLength) bytes or an integer")))
            }
        }
        do {
            let op = try operation(members)
            return .success(Request(id: id, operation: op))
        } catch {
            return .failure(DecodeFailure(id: id, error: error))
        }
    }

    /// A request that could not be decoded.
    public struct DecodeFailure: Error, Sendable, Equatable {
        public var id: RequestID?
        public var error: ProtocolError
    }

    private static func operation(_ members: [(String, JSON)]) throws(ProtocolError) -> Operation {
        var fields = RequestFields(members)
        let op = try fields.requiredString("op")
        let result: Operation
        switch op {
        case "ping": result = .ping
        case "workers": result = .workers
        case "stats": result = .stats
        case "metrics": result = .metrics
        case "status": result = .status(job: try fields.requiredName("job"))
        case "cancel": result = .cancel(job: try fields.requiredName("job"))
        case "inspect": result = .inspect(worker: try fields.requiredName("worker"))
        case "mode": result = .mode(worker: try fields.requiredName("worker"), mode: try fields.requiredName("mode"))
        case "submit": result = .submit(try submit(&fields))
        case "jobs": result = .jobs(try jobs(&fields))
        case "wait":
            result = .wait(job: try fields.requiredName("job"),
                           timeoutMs: try fields.optionalInteger("timeout_ms", in: 1...RequestLimits.maxWaitMs))
        case "schedules": result = .schedules
        case "fleet": result = .fleet
        case "retry": result = .retry(try endedJobs(&fields, op: op))
        case "discard": result = .discard(try endedJobs(&fields, op: op))
        case let name where ScheduleCommand(rawValue: name) != nil:
            result = .schedule(ScheduleCommand(rawValue: name)!, name: try fields.requiredName("schedule"))
        default: throw ProtocolError(.unknownOp, "unknown op \"\(op)\"")
        }
        try fields.rejectUnknown(op: op)
        return result
    }

    private static func submit(_ f: inout RequestFields) throws(ProtocolError) -> SubmitRequest {
        var s = SubmitRequest(action: try f.requiredName("action"))
        if let args = try f.optionalArray("args") {
            guard args.count <= RequestLimits.maxArgs else {
                throw ProtocolError(.badRequest, "\"args\" has \(args.count) items; at most \(RequestLimits.maxArgs)")
            }
            var out: [String] = []
            for (k, a) in args.enumerated() {
                guard let str = a.stringValue else {
                    throw ProtocolError(.badRequest, "\"args\"[\(k)] must be a string, not \(a.typeName)")
                }
                guard !str.utf8.contains(0) else { throw ProtocolError(.badRequest, "\"args\"[\(k)] contains a NUL byte") }
                out.append(str)
            }
            s.args = out
        }
        let worker = try f.optionalName("worker")
        let key = try f.optionalName("key")
        switch (worker, key) {
        case (.some, .some): throw ProtocolError(.badRequest, "give \"worker\" or \"key\", not both")
        case (let w?, nil): s.placement = w == "any" ? .any : .worker(w)
        case (nil, let k?): s.placement = .key(k)
        case (nil, nil): s.placement = .any
        }
        s.wait = try f.optionalBool("wait") ?? true
        s.durable = try f.optionalBool("durable") ?? false
        s.delayMs = try f.optionalInteger("delay_ms", in: 0...RequestLimits.maxDelayMs) ?? 0
        s.timeoutMs = try f.optionalInteger("timeout_ms", in: 1...RequestLimits.maxTimeoutMs)
        s.mode = try f.optionalName("mode")
        if let p = try f.optionalInteger("priority", in: 0...Int64(UInt32.max)) { s.priority = UInt32(p) }
        s.expiresInMs = try f.optionalInteger("expires_in_ms", in: 1...RequestLimits.maxExpiresInMs)
        try retryFields(&f, into: &s)
        s.fleet = try f.optionalBool("fleet")
        s.node = try f.optionalName("node")
        return s
    }
}
