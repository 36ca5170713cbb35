import LoopRuntime
import Testing
@testable import LoopdCore
@testable import LoopdProtocol

/// Replies are written as bytes straight into a connection's buffer; the
/// text must be exactly what the String writer they replaced produced.
@Suite struct JSONBytesTests {
    /// The String writer replies were built with before (kept here as the reference).
    static func reference(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .integer(let n): return String(n)
        case .double(let d): return d.isFinite ? "\(d)" : "null"
        case .string(let s): return referenceString(s)
        case .array(let items): return "[" + items.map(reference).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { referenceString($0.0) + ":" + reference($0.1) }.joined(separator: ",") + "}"
        }
    }

    static func referenceString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20 || u.value == 0x7F || u.value == 0x2028 || u.value == 0x2029:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    static let strings = [
        "", "plain", "with \"quotes\" and \\ backslash", "tab\tnew\nline\rcr", "\u{0}\u{1}\u{1F}\u{7F}",
        "line\u{2028}sep\u{2029}", "é ü ß 日本 🦊", "\u{E000}\u{FFFF}\u{10FFFF}", "€ starts with E2 too",
    ]

    static let values: [JSON] = [
        .null, true, false, 0, -1, 42, .integer(.max), .integer(.min), .double(0.5), .double(-1e300), .double(.infinity),
        .double(.nan), [], [1, "a", nil, [true]], .object([]),
        .object([("job", "m3k2x9a1-17"), ("state", "completed"), ("worker", "w1"), ("result", .object([("output", "a\nb")]))]),
    ] + strings.map { .string($0) } + [.object(strings.map { ($0, .string($0)) })]

    @Test func bytesMatchTheStringWriter() {
        for value in Self.values {
            var bytes: [UInt8] = []
            value.write(into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == Self.reference(value))
            #expect(value.serialized() == Self.reference(value))
        }
    }

    /// Replies and log lines are written on the stack first (`ByteCursor`):
    /// the bytes must be the array writer's, whether the text fits the
    /// stack or is written again into the array.
    /// Every ASCII character, and the scalars whose UTF-8 starts with 0xE2,
    /// inside a string and alone: the byte table the writer scans by
    /// escapes exactly what the reference escapes.
    @Test func everyASCIICharacterIsWrittenAsTheReferenceWritesIt() {
        let scalars = (0..<0x80).map { Unicode.Scalar(UInt8($0)) } + ["\u{2028}", "\u{2029}", "\u{20AC}", "\u{2000}"]
        for u in scalars {
            for s in [String(u), "a\(u)b"] {
                var bytes: [UInt8] = []
                JSON.string(s).write(into: &bytes)
                #expect(String(decoding: bytes, as: UTF8.self) == Self.referenceString(s), "U+\(String(u.value, radix: 16))")
            }
        }
    }

    @Test func theStackWriterWritesTheSameBytesOrFallsBackToTheArray() {
        for value in Self.values {
            var direct: [UInt8] = []
            value.write(into: &direct)
            for stackBytes in [1, 16, 4096] {
                var out: [UInt8] = Array("prefix ".utf8)
                out.appendFormatted(stackBytes: stackBytes, { value.write(into: &$0) }, else: { value.write(into: &$0) })
                #expect(out == Array("prefix ".utf8) + direct, "stack of \(stackBytes) bytes")
            }
        }
    }

    /// A piece that does not fit stops the cursor: nothing of it or after it
    /// is written, so what was written is a clean prefix.
    @Test func aCursorStopsAtThePieceThatDoesNotFit() {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8) { stack in
            var cursor = ByteCursor(stack)
            cursor.appendLiteral("ab")
            cursor.appendDecimal(1234)
            cursor.append(UInt8(ascii: "-"))
            #expect(Array(cursor.written) == Array("ab1234-".utf8) && !cursor.overflowed)
            cursor.appendUTF8("xy")
            #expect(cursor.overflowed && cursor.count == 7)
            cursor.append(UInt8(ascii: "z"))
            cursor.appendDecimal(0)
            #expect(Array(cursor.written) == Array("ab1234-".utf8))
        }
        var nothing = ByteCursor(UnsafeMutableBufferPointer(start: nil, count: 0))
        nothing.appendLiteral("x")
        #expect(nothing.overflowed && nothing.count == 0)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { stack in
            var cursor = ByteCursor(stack)
            cursor.appendDecimal(.max)
            #expect(String(decoding: cursor.written, as: UTF8.self) == String(UInt64.max) && !cursor.overflowed)
        }
        // A member name and its four marks fit whole or not at all, and
        // spell what the array writes.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 11) { stack in
            var cursor = ByteCursor(stack)
            var array: [UInt8] = []
            cursor.appendMemberName("state")
            array.appendMemberName("state")
            #expect(Array(cursor.written) == array && String(decoding: array, as: UTF8.self) == #","state":"#)
            cursor.appendMemberName("id")
            #expect(cursor.overflowed && cursor.count == 9)
        }
    }

    @Test func replyLinesMatch() {
        let fields: [(String, JSON)] = [("job", "j-1"), ("state", "completed"), ("result", .object([("x", 1)]))]
        let error = ProtocolError(.jobFailed, "it \"failed\"\n")
        for id: RequestID? in [nil, .integer(-7), .string("a\"b")] {
            let idText = id.map { Self.reference($0.json) } ?? "null"
            let ok = Response.ok(id: id, fields)
            #expect(ok == "{\"id\":\(idText),\"ok\":true," + Self.reference(.object(fields)).dropFirst() + "\n")
            let failed = Response.error(id: id, error, fields)
            let errorText = Self.reference(.object([("code", "job_failed"), ("message", .string(error.message))]))
            #expect(failed == "{\"id\":\(idText),\"ok\":false,\"error\":\(errorText)," + Self.reference(.object(fields)).dropFirst() + "\n")
            #expect(Response.ok(id: id) == "{\"id\":\(idText),\"ok\":true}\n")
        }
    }
}

/// Every reply about a job comes from `JobReply`, on whichever thread: it
/// must be exactly the line `Response` writes for the job's field list.
@Suite struct JobReplyTests {
    /// The fields a client reads: job, state, worker, and result when there is one.
    private func fields(_ job: Job, _ state: JobState, _ result: JSON?) -> [(String, JSON)] {
        var f: [(String, JSON)] = [("job", .string(job.id)), ("state", .string(state.rawValue)), ("worker", .string(job.worker.name))]
        if let result { f.append(("result", result)) }
        return f
    }

    @Test func acknowledgementsAndEndsMatchTheirFieldList() {
        let fixture = JobFixture(worker: "w\"1")
        defer { fixture.stop() }
        let job = fixture.job("m3k2x9a1-17")
        for result: JSON? in [nil, .object([]), .object([("output", "a\nb ü")])] {
            for state in JobState.allCases {
                for id: RequestID? in [nil, .integer(7), .string("x")] {
                    var out: [UInt8] = []
                    JobReply.write(job, state: state, result: result, error: nil, requestID: id, into: &out)
                    #expect(String(decoding: out, as: UTF8.self) == Response.ok(id: id, fields(job, state, result)))
                }
            }
        }
    }

    /// The reply to a waited job, from its outcome: `ok` with the result,
    /// or the error with the job's fields, in the state the outcome means.
    @Test func endedRepliesCarryTheStateTheirOutcomeMeans() {
        let fixture = JobFixture(worker: "w2")
        defer { fixture.stop() }
        let job = fixture.job("m3k2x9a1-18")
        let cases: [(ActionOutcome, JobState)] = [
            (.success(.object([("output", "a\nb ü")])), .completed), (.success(.object([])), .completed),
            (.failure(ProtocolError(.jobFailed, "exit status 3"), result: .object([("exit_code", 3)])), .failed),
            (.failure(ProtocolError(.timeout, "ran past 5 ms"), result: .object([])), .timedOut),
            (.failure(ProtocolError(.cancelled, "cancelled by uid 0"), result: .object([])), .cancelled),
            // Longer than the stack a worker writes a reply on first.
            (.success(.object([("output", .string(String(repeating: "line \"ü\"\n", count: 200)))])), .completed),
        ]
        for (outcome, state) in cases {
            for id: RequestID? in [nil, .integer(7), .string("x")] {
                var out: [UInt8] = []
                JobReply.write(job, endedWith: outcome, requestID: id, into: &out)
                // As a worker writes it: on the stack, or again in the array.
                var staged: [UInt8] = []
                staged.appendFormatted(stackBytes: 512, { JobReply.write(job, endedWith: outcome, requestID: id, into: &$0) },
                                       else: { JobReply.write(job, endedWith: outcome, requestID: id, into: &$0) })
                #expect(staged == out)
                let expected: String
                switch outcome {
                case .success(let result): expected = Response.ok(id: id, fields(job, state, result))
                case .failure(let e, let result): expected = Response.error(id: id, e, fields(job, state, result))
                }
                #expect(String(decoding: out, as: UTF8.self) == expected)
            }
        }
    }
}
