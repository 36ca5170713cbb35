import LoopdProtocol

/// One response line from the daemon, parsed.
public struct Reply: Sendable, Equatable {
    /// The line exactly as received, without its newline (what `--json` prints).
    public let line: String
    /// The parsed object.
    public let json: JSON
    /// The request id it echoes; nil when the daemon could not read one.
    public let id: RequestID?
    /// The reply's `ok`.
    public let ok: Bool

    /// Parses a response line. Anything but an object with a boolean `ok`
    /// and a string, integer or null `id` is a protocol error.
    public init(line: String) throws(ClientError) {
        let json: JSON
        do {
            json = try JSONParser.parse(line.utf8, maxDepth: 64)
        } catch {
            throw .protocol("reply is not JSON (\(error.description)): \(Reply.excerpt(line))")
        }
        guard case .object = json else { throw .protocol("reply is not a JSON object: \(Reply.excerpt(line))") }
        guard let ok = json["ok"]?.boolValue else { throw .protocol("reply has no boolean \"ok\": \(Reply.excerpt(line))") }
        switch json["id"] {
        case nil, .null?: id = nil
        case .string(let s)?: id = .string(s)
        case .integer(let n)?: id = .integer(n)
        default: throw .protocol("reply has an \"id\" that is neither string, integer nor null")
        }
        self.line = line
        self.json = json
        self.ok = ok
    }

    /// The error code as sent, including codes this client does not know.
    public var errorCode: String? { json["error"]?["code"]?.stringValue }

    /// The error message as sent.
    public var errorMessage: String { json["error"]?["message"]?.stringValue ?? "" }

    private static func excerpt(_ line: String) -> String {
        line.utf8.count <= 200 ? line : String(line.prefix(200)) + "…"
    }
}
