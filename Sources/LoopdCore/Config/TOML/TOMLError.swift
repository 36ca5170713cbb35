/// A place in a TOML document. Both numbers are 1-based; the column counts
/// Unicode scalars, which for ordinary text is what an editor shows.
struct TOMLPosition: Hashable, Sendable, CustomStringConvertible {
    let line: Int
    let column: Int

    var description: String { "line \(line), column \(column)" }
}

/// Why a TOML document was rejected, and where. The message is one sentence
/// for a person fixing the file by hand, such as
/// `expected "=" after the key "name", found "\""`.
struct TOMLError: Error, Equatable, Sendable, CustomStringConvertible {
    let line: Int
    let column: Int
    let message: String

    init(_ message: String, at position: TOMLPosition) {
        self.line = position.line
        self.column = position.column
        self.message = message
    }

    var position: TOMLPosition { TOMLPosition(line: line, column: column) }

    var description: String { "\(line):\(column): \(message)" }
}
