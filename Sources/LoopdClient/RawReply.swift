/// A reply line as the daemon sent it: a JSON object with a boolean `ok`,
/// parsed once and not interpreted further. ``LoopdClient/LoopdClient/send(op:_:)``
/// and ``LoopdClient/LoopdClient/Blocking/reply(to:)`` return it, whether
/// `ok` or not; a tool shows ``line`` as it came and reads ``json`` for the rest.
public struct RawReply: Sendable, Equatable {
    private var bytes: [UInt8]
    /// The line without its newline, exactly as it came.
    public var line: String { String(decoding: bytes, as: UTF8.self) }
    /// The parsed object.
    public var json: JSON
    /// The reply's `ok`.
    public var ok: Bool { json["ok"]?.boolValue ?? false }
    /// The reply's error when `ok` is false.
    public var error: LoopdError? { ok ? nil : LoopdError(errorObject: json["error"], reply: json) }

    /// Reads `line` (without its newline) as the client reads a line from
    /// the daemon: for a tool that reads replies saved earlier (the output
    /// of `loopctl --json`), and for tests of code that shows replies.
    /// Throws `LoopdError` with code `invalidReply` for anything but a JSON
    /// object with a boolean `ok`.
    public init(line: String) throws(LoopdError) {
        let bytes = Array(line.utf8)
        let json: JSON
        do {
            json = try bytes.withUnsafeBufferPointer(ReplyHandler.parse)
        } catch {
            throw bytes.withUnsafeBufferPointer { ReplyHandler.notJSON(error, $0) }
        }
        try self.init(json: json, bytes: bytes)
    }

    /// The reply `json`, parsed from `bytes`. A line that parsed but is not
    /// an object with a boolean `ok` is not a reply: `invalidReply`, as the
    /// typed operations say too.
    init(json: JSON, bytes: [UInt8]) throws(LoopdError) {
        guard case .object = json else {
            throw LoopdError(.invalidReply, "reply is not a JSON object: \(bytes.withUnsafeBufferPointer(ReplyHandler.excerpt))")
        }
        guard json["ok"]?.boolValue != nil else {
            throw LoopdError(.invalidReply, "reply has no boolean \"ok\": \(bytes.withUnsafeBufferPointer(ReplyHandler.excerpt))")
        }
        self.json = json
        self.bytes = bytes
    }
}
