/// A place in a TOML document. Both numbers are 1-based; the column counts
/// Unicode scalars, which for ordinary text is what an editor shows.
public struct TOMLPosition: Hashable, Sendable, CustomStringConvertible {
    /// The line, from 1.
    public let line: Int
    /// The column, from 1.
    public let column: Int

    /// `line L, column C`.
    public var description: String { "line \(line), column \(column)" }
}

/// Why a TOML document was rejected, and where. The message is one sentence
/// for a person fixing the file by hand, such as
/// `expected "=" after the key "name", found "\""`.
public struct TOMLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The line of the error, from 1.
    public let line: Int
    /// The column of the error, from 1.
    public let column: Int
    /// What is wrong, as one sentence.
    public let message: String

    init(_ message: String, at position: TOMLPosition) {
        self.line = position.line
        self.column = position.column
        self.message = message
    }

    /// Where the error is.
    public var position: TOMLPosition { TOMLPosition(line: line, column: column) }

    /// `LINE:COLUMN: message`.
    public var description: String { "\(line):\(column): \(message)" }
}
