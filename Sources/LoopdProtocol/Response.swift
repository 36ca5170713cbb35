/// Builds response lines.
public enum Response {
    /// `{"id":…,"ok":true,…fields}` as one line with its newline.
    public static func ok(id: RequestID?, _ fields: [(String, JSON)] = []) -> String {
        var line: [UInt8] = []
        ok(id: id, fields, into: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// `{"id":…,"ok":false,"error":{"code":…,"message":…}}` as one line with its newline.
    public static func error(id: RequestID?, _ error: ProtocolError, _ fields: [(String, JSON)] = []) -> String {
        var line: [UInt8] = []
        self.error(id: id, error, fields, into: &line)
        return String(decoding: line, as: UTF8.self)
    }
}

extension Response {
    /// Appends `ok(id:_:)`'s line, newline included, to `out`.
    @inlinable
    public static func ok(id: RequestID?, _ fields: [(String, JSON)] = [], into out: inout some ByteOutput) {
        beginOK(id: id, into: &out)
        for (name, value) in fields { member(name, value, into: &out) }
        end(into: &out)
    }

    /// Appends `error(id:_:_:)`'s line, newline included, to `out`.
    @inlinable
    public static func error(id: RequestID?, _ error: ProtocolError, _ fields: [(String, JSON)] = [], into out: inout some ByteOutput) {
        begin(id: id, ok: false, into: &out)
        JSON.append(#","error":{"code":"#, to: &out)
        JSON.writeString(error.code.rawValue, into: &out)
        JSON.append(#","message":"#, to: &out)
        JSON.writeString(error.message, into: &out)
        out.append(UInt8(ascii: "}"))
        for (name, value) in fields { member(name, value, into: &out) }
        end(into: &out)
    }

    // MARK: field by field

    // For replies whose fields are at hand without building a list first:
    // `beginOK`, the `field`s, then `end` append exactly what
    // `ok(id:_:into:)` appends for the same fields in the same order.

    /// `{"id":…,"ok":true`
    @inlinable
    public static func beginOK(id: RequestID?, into out: inout some ByteOutput) {
        begin(id: id, ok: true, into: &out)
    }

    /// `,"name":"value"`. The name is a literal, written as it is: a
    /// member name of the protocol, plain ASCII that needs no escape.
    @inlinable
    public static func field(_ name: StaticString, _ value: String, into out: inout some ByteOutput) {
        fieldName(name, into: &out)
        JSON.writeString(value, into: &out)
    }

    /// `,"name":"value"` for a value known to need no escape (a state's
    /// spelling), the name as in `field(_:_:into:)`.
    @inlinable
    public static func field(_ name: StaticString, plain value: StaticString, into out: inout some ByteOutput) {
        fieldName(name, into: &out)
        out.append(UInt8(ascii: "\""))
        out.appendLiteral(value)
        out.append(UInt8(ascii: "\""))
    }

    /// `,"name":value`, the name as in `field(_:_:into:)`.
    @inlinable
    public static func field(_ name: StaticString, _ value: JSON, into out: inout some ByteOutput) {
        fieldName(name, into: &out)
        value.write(into: &out)
    }

    /// `,"name":`
    @inlinable
    static func fieldName(_ name: StaticString, into out: inout some ByteOutput) {
        assert(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount).allSatisfy {
            $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
        }, "a member name written as it is must need no escape")
        out.appendMemberName(name)
    }

    /// `,"name":value` for a name known only at run time, escaped as needed.
    @inlinable
    static func member(_ name: String, _ value: JSON, into out: inout some ByteOutput) {
        out.append(UInt8(ascii: ","))
        JSON.writeString(name, into: &out)
        out.append(UInt8(ascii: ":"))
        value.write(into: &out)
    }

    /// `}` and the newline.
    @inlinable
    public static func end(into out: inout some ByteOutput) {
        JSON.append("}\n", to: &out)
    }

    /// `{"id":…,"ok":…` (what `JSON.object` writes for those two members).
    @inlinable
    static func begin(id: RequestID?, ok: Bool, into out: inout some ByteOutput) {
        JSON.append(#"{"id":"#, to: &out)
        switch id {
        case nil: JSON.append("null", to: &out)
        case .string(let s)?: JSON.writeString(s, into: &out)
        case .integer(let n)?: JSON.writeInteger(n, into: &out)
        }
        JSON.append(ok ? #","ok":true"# : #","ok":false"#, to: &out)
    }
}
