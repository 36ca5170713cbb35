import LoopPlatform
import Testing
@testable import LoopdCore

/// The configuration loader turns the TOML parser's refusals into syntax
/// errors that name the file, the line and the column.
@Suite("Config: TOML syntax errors through the loader")
struct ConfigSyntaxErrorTests {
    /// The corpus files themselves, so that they stay what their names say.
    static let corpusFiles: [(file: String, line: Int, column: Int, phrase: String)] = [
        ("tomlkit-table-header-abort.toml", 7, 3, "expected a key"),
        ("tomlkit-table-header-abort-equals.toml", 3, 2, "expected a key"),
        ("tomlkit-date-time-abort.toml", 8, 21, "expected a time (hh:mm:ss) after \"T\""),
    ]

    @Test("the corpus files are syntax errors with a position, through the config loader")
    func tomlkitAborts_corpusFilesAreSyntaxErrors() throws {
        for entry in Self.corpusFiles {
            let text = try #require(RepositoryFile.read("Fuzz/corpus/FuzzConfigParser/\(entry.file)"), "\(entry.file)")
            do {
                _ = try ConfigLoader.parse(text, origin: entry.file)
                Issue.record("\(entry.file) was accepted")
            } catch {
                guard case .syntax(let origin, let line, let column, let message) = error else {
                    Issue.record("\(entry.file): \(error)")
                    continue
                }
                #expect(origin == entry.file)
                #expect(line == entry.line && column == entry.column, "\(error)")
                #expect(message.contains(entry.phrase), "\(error)")
            }
        }
    }

    @Test("the config loader reports these as syntax errors with a position")
    func tomlkitHeaderAbort_checkConfigNamesTheLine() {
        #expect(throws: ConfigError.syntax(origin: "t.toml", line: 2, column: 2, message: "expected a key (A-Z a-z 0-9 _ - or a quoted string), found \"=\"")) {
            try ConfigLoader.parse("[[workers]]\n[=]\n", origin: "t.toml")
        }
    }
}

/// The repository's files, found from this file's path.
enum RepositoryFile {
    static func read(_ relativePath: String) -> String? {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/LoopdTests/ConfigSyntaxErrorTests.swift
        let path = parts.joined(separator: "/") + "/" + relativePath
        guard case .success(let bytes) = FileSystem.readFile(path, limit: 1 << 20) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
