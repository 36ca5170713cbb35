/// Typed access to a request's members that remembers which were read.
struct RequestFields {
    private let members: [(String, JSON)]
    /// Which members were read, by index (requests have a handful of
    /// members; more than 64 cannot all be known fields anyway).
    private var used: UInt64 = 0

    init(_ members: [(String, JSON)]) {
        self.members = members
        if let i = members.firstIndex(where: { $0.0 == "id" }), i < 64 { used |= 1 << UInt64(i) }
    }

    private mutating func take(_ key: String) -> JSON? {
        guard let i = members.firstIndex(where: { $0.0 == key }) else { return nil }
        if i < 64 { used |= 1 << UInt64(i) }
        let v = members[i].1
        if case .null = v { return nil }
        return v
    }

    /// Whether the request has `key` (null counts as absent, as everywhere).
    func has(_ key: String) -> Bool {
        members.contains { $0.0 == key && $0.1 != .null }
    }

    mutating func requiredString(_ key: String) throws(ProtocolError) -> String {
        guard let v = take(key) else { throw ProtocolError(.badRequest, "missing \"\(key)\"") }
        guard let s = v.stringValue else { throw ProtocolError(.badRequest, "\"\(key)\" must be a string, not \(v.typeName)") }
        return s
    }

    mutating func optionalString(_ key: String) throws(ProtocolError) -> String? {
        guard let v = take(key) else { return nil }
        guard let s = v.stringValue else { throw ProtocolError(.badRequest, "\"\(key)\" must be a string, not \(v.typeName)") }
        return s
    }

    /// The member `key` as it is (nil when absent or null), for values of
    /// more than one shape.
    mutating func optionalValue(_ key: String) -> JSON? {
        take(key)
    }

    mutating func requiredName(_ key: String) throws(ProtocolError) -> String {
        let s = try requiredString(key)
        try checkName(key, s)
        return s
    }

    mutating func optionalName(_ key: String) throws(ProtocolError) -> String? {
        guard let v = take(key) else { return nil }
        guard let s = v.stringValue else { throw ProtocolError(.badRequest, "\"\(key)\" must be a string, not \(v.typeName)") }
        try checkName(key, s)
        return s
    }

    private func checkName(_ key: String, _ s: String) throws(ProtocolError) {
        guard !s.isEmpty, s.utf8.count <= RequestLimits.maxNameLength, !s.utf8.contains(0) else {
            throw ProtocolError(.badRequest, "\"\(key)\" must be 1 to \(RequestLimits.maxNameLength) bytes without NUL")
        }
    }

    mutating func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        guard let v = take(key) else { return nil }
        guard let b = v.boolValue else { throw ProtocolError(.badRequest, "\"\(key)\" must be true or false, not \(v.typeName)") }
        return b
    }

    mutating func optionalInteger(_ key: String, in range: ClosedRange<Int64>) throws(ProtocolError) -> Int64? {
        guard let v = take(key) else { return nil }
        guard let n = v.integerValue else {
            throw ProtocolError(.badRequest, "\"\(key)\" must be an integer, not \(v.typeName == "number" ? "a fraction or a number this large" : v.typeName)")
        }
        guard range.contains(n) else { throw ProtocolError(.badRequest, "\"\(key)\" must be in \(range.lowerBound)...\(range.upperBound), not \(n)") }
        return n
    }

    mutating func optionalArray(_ key: String) throws(ProtocolError) -> [JSON]? {
        guard let v = take(key) else { return nil }
        guard let a = v.arrayValue else { throw ProtocolError(.badRequest, "\"\(key)\" must be an array, not \(v.typeName)") }
        return a
    }

    func rejectUnknown(op: String) throws(ProtocolError) {
        for (i, member) in members.enumerated() where i >= 64 || used & (1 << UInt64(i)) == 0 {
            throw ProtocolError(.badRequest, "unknown field \"\(member.0)\" for op \"\(op)\"")
        }
    }
}
