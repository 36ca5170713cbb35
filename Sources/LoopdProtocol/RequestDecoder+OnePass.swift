/// The one-pass decoder: the requests clients send all day (plain members,
/// known fields, valid values) are read straight from the line's bytes,
/// without building a `JSON` tree. It only ever accepts: a line it cannot
/// read as a valid request, for any reason, gets nil, and `decode` passes it
/// to the generic decoder, so every refusal and its message come from one
/// place. For a line it does accept, it returns exactly the `Request` the
/// generic decoder returns (the fuzz target and `OnePassDecoderTests`
/// compare the two).
///
/// `jobs` and `wait` are not read here: they are not the hot path, so their
/// lines always go to the generic decoder (an op this file does not know
/// gets nil like any other line it cannot read).
extension RequestDecoder {
    /// The members a request may have; each is read once.
    private enum Member: UInt16 {
        case id, op, action, args, worker, key, wait, durable, delayMs, timeoutMs, mode, job, priority, expiresInMs

        /// The member named by these bytes (ASCII, compared byte for byte).
        init?(_ name: UnsafeBufferPointer<UInt8>) {
            func equals(_ literal: StaticString) -> Bool { RequestScanner.equal(name, literal) }
            switch name.count {
            case 2: if equals("id") { self = .id } else if equals("op") { self = .op } else { return nil }
            case 3: if equals("key") { self = .key } else if equals("job") { self = .job } else { return nil }
            case 4: if equals("args") { self = .args } else if equals("wait") { self = .wait }
                    else if equals("mode") { self = .mode } else { return nil }
            case 6: if equals("action") { self = .action } else if equals("worker") { self = .worker } else { return nil }
            case 7: if equals("durable") { self = .durable } else { return nil }
            case 13: if equals("expires_in_ms") { self = .expiresInMs } else { return nil }
            case 8: if equals("delay_ms") { self = .delayMs } else if equals("priority") { self = .priority } else { return nil }
            case 10: if equals("timeout_ms") { self = .timeoutMs } else { return nil }
            default: return nil
            }
        }

        var bit: UInt16 { 1 << rawValue }
    }

    /// The values read so far, as the generic decoder would see them.
    private struct Members {
        var seen: UInt16 = 0
        var id: RequestID?
        var op: UnsafeBufferPointer<UInt8>?
        var action: String?
        var args: [String]?
        var worker: String?
        var key: String?
        var wait: Bool?
        var durable: Bool?
        var delayMs: Int64?
        var timeoutMs: Int64?
        var mode: String?
        var job: String?
        var priority: Int64?
        var expiresInMs: Int64?

        /// Whether only members in `allowed` (plus `id` and `op`) were given.
        /// Inlined, so that each call's list folds into a constant mask.
        @inline(__always)
        func only(_ allowed: [Member]) -> Bool {
            var mask = Member.id.bit | Member.op.bit
            for m in allowed { mask |= m.bit }
            return seen & ~mask == 0
        }
    }

    /// The request in `line`, or nil when the generic decoder must judge it.
    static func decodeOnePass(_ line: UnsafeBufferPointer<UInt8>) -> Request? {
        var request = Request(id: nil, operation: .ping)
        return decodeOnePass(line, into: &request) ? request : nil
    }

    /// Reads the request in `line` into `request`; false (with `request`
    /// left as it was) when the generic decoder must judge it. Written in
    /// place, not returned: a request is a large value, and returning one
    /// (as an optional, through a closure) copies it several times over.
    static func decodeOnePass(_ line: UnsafeBufferPointer<UInt8>, into request: inout Request) -> Bool {
        var scanner = RequestScanner(line)
        var members = Members()
        guard readMembers(&scanner, into: &members), let op = members.op,
              operation(op, &members, into: &request.operation) else { return false }
        request.id = members.id.take()
        return true
    }

    /// Reads `{ "name": value, … }` to the end of the line into `m`; false
    /// if the line is not such an object.
    private static func readMembers(_ s: inout RequestScanner, into m: inout Members) -> Bool {
        guard s.consume(UInt8(ascii: "{")) else { return false }
        repeat {
            guard let (name, ascii) = s.rawString(), ascii, let member = Member(name),
                  m.seen & member.bit == 0, s.consume(UInt8(ascii: ":")) else { return false }
            m.seen |= member.bit
            switch member {
            case .id:
                s.skipSpace()
                if s.peek == UInt8(ascii: "\"") {
                    guard let v = s.string(), v.utf8.count <= RequestLimits.maxNameLength else { return false }
                    m.id = .string(v)
                } else {
                    guard let v = s.integer() else { return false }
                    m.id = .integer(v)
                }
            case .op:
                guard let (v, _) = s.rawString() else { return false }
                m.op = v
            case .action: guard let v = nameValue(&s) else { return false }; m.action = v
            case .worker: guard let v = nameValue(&s) else { return false }; m.worker = v
            case .key: guard let v = nameValue(&s) else { return false }; m.key = v
            case .mode: guard let v = nameValue(&s) else { return false }; m.mode = v
            case .job: guard let v = nameValue(&s) else { return false }; m.job = v
            case .args: guard let v = s.strings() else { return false }; m.args = v
            case .wait: guard let v = s.bool() else { return false }; m.wait = v
            case .durable: guard let v = s.bool() else { return false }; m.durable = v
            case .delayMs: guard let v = s.integer() else { return false }; m.delayMs = v
            case .timeoutMs: guard let v = s.integer() else { return false }; m.timeoutMs = v
            case .priority: guard let v = s.integer() else { return false }; m.priority = v
            case .expiresInMs: guard let v = s.integer() else { return false }; m.expiresInMs = v
            }
        } while s.consume(UInt8(ascii: ","))
        guard s.consume(UInt8(ascii: "}")) else { return false }
        s.skipSpace()
        return s.atEnd
    }

    /// A name value: 1 to `maxNameLength` bytes (a raw string has no NUL).
    private static func nameValue(_ s: inout RequestScanner) -> String? {
        guard let v = s.string(), !v.isEmpty, v.utf8.count <= RequestLimits.maxNameLength else { return nil }
        return v
    }

    /// Sets `out` to the operation `op` names, made of the members, which
    /// it takes: the values move into the request rather than being
    /// copied. False, with `out` unchanged, if the members do not make one.
    private static func operation(_ op: UnsafeBufferPointer<UInt8>, _ m: inout Members, into out: inout Operation) -> Bool {
        func isOp(_ literal: StaticString) -> Bool { RequestScanner.equal(op, literal) }
        if isOp("submit") {
            return m.only([.action, .args, .worker, .key, .wait, .durable, .delayMs, .timeoutMs, .mode, .priority, .expiresInMs])
                && submit(&m, into: &out)
        }
        let operation: Operation?
        if isOp("ping") { operation = m.only([]) ? .ping : nil }
        else if isOp("status") { operation = m.only([.job]) ? m.job.take().map { .status(job: $0) } : nil }
        else if isOp("cancel") { operation = m.only([.job]) ? m.job.take().map { .cancel(job: $0) } : nil }
        else if isOp("stats") { operation = m.only([]) ? .stats : nil }
        else if isOp("workers") { operation = m.only([]) ? .workers : nil }
        else if isOp("metrics") { operation = m.only([]) ? .metrics : nil }
        else if isOp("inspect") { operation = m.only([.worker]) ? m.worker.take().map { .inspect(worker: $0) } : nil }
        else if isOp("mode"), m.only([.worker, .mode]), let worker = m.worker.take(), let mode = m.mode.take() {
            operation = .mode(worker: worker, mode: mode)
        } else { operation = nil }
        guard let operation else { return false }
        out = operation
        return true
    }

    private static func submit(_ m: inout Members, into out: inout Operation) -> Bool {
        guard let action = m.action.take() else { return false }
        if let n = m.args?.count, n > RequestLimits.maxArgs { return false }
        let placement: Placement
        switch (m.worker.take(), m.key.take()) {
        case (.some, .some): return false
        case (let w?, nil): placement = w == "any" ? .any : .worker(w)
        case (nil, let k?): placement = .key(k)
        case (nil, nil): placement = .any
        }
        if let delay = m.delayMs, !(0...RequestLimits.maxDelayMs).contains(delay) { return false }
        if let timeout = m.timeoutMs, !(1...RequestLimits.maxTimeoutMs).contains(timeout) { return false }
        var priority = SubmitRequest.defaultPriority
        if let p = m.priority {
            guard let v = UInt32(exactly: p) else { return false }
            priority = v
        }
        if let e = m.expiresInMs, !(1...RequestLimits.maxExpiresInMs).contains(e) { return false }
        // Made in one step, in place, not field by field: the request is a large value.
        out = .submit(SubmitRequest(action: action, args: m.args.take() ?? [], placement: placement, wait: m.wait ?? true,
                                    delayMs: m.delayMs ?? 0, timeoutMs: m.timeoutMs, mode: m.mode.take(),
                                    durable: m.durable ?? false, priority: priority, expiresInMs: m.expiresInMs))
        return true
    }
}
