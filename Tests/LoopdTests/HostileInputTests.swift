import Foundation
import Glibc
import LoopdProtocol
import Testing
@testable import LoopdCore

/// The bad input corpus (docs/RELIABILITY.md, "Bad input
/// corpus"): every hostile request in `HostileInputTests.rows` gets its
/// documented error, literal success or clean close, on a connection that
/// stays usable unless the protocol says it closes; pipelined floods are
/// answered request by request; exec arguments arrive as literal argv
/// entries and no shell ever runs. Meanwhile a control client submits a
/// steady stream of echo jobs, and every one of them must complete with its
/// own output.
@Suite(.serialized) struct HostileInputTests {
    /// What a row must get back.
    enum Expect {
        /// `ok:false` with this error code; the connection stays open.
        case error(String)
        /// `ok:true` with these literal values at these dotted paths (`result.stdout`).
        case ok([(String, JSON)])
        /// `too_large` with `"id":null`, then the daemon closes the connection.
        case tooLarge
    }

    /// One hostile request line, sent as it is on a connection of its own.
    struct Row {
        let name: String
        let bytes: [UInt8]
        /// The id the reply must carry: `.null` when the line is too broken to read one.
        let id: JSON
        let expect: Expect
    }

    static let maxLine = DaemonConfig.Limits().maxLineBytes

    /// A request line from JSON text (a newline is appended).
    static func line(_ text: String) -> [UInt8] { Array(text.utf8) + [0x0A] }

    /// A request line with raw bytes (invalid UTF-8, NUL) spliced into JSON text.
    static func splice(_ before: String, _ raw: [UInt8], _ after: String) -> [UInt8] {
        Array(before.utf8) + raw + Array(after.utf8) + [0x0A]
    }

    /// `{"id":ID,"op":"submit",FIELDS}` as a line.
    static func submit(_ id: Int, _ fields: String) -> [UInt8] { line(#"{"id":\#(id),"op":"submit",\#(fields)}"#) }

    /// A line of exactly `length` bytes before its terminator: an echo whose argument pads it.
    static func paddedEcho(id: String, length: Int, terminator: [UInt8] = [0x0A]) -> (bytes: [UInt8], arg: String) {
        let head = #"{"id":"\#(id)","op":"submit","action":"echo","args":[""#
        let tail = #""]}"#
        let arg = String(repeating: "A", count: length - head.utf8.count - tail.utf8.count)
        return (Array((head + arg + tail).utf8) + terminator, arg)
    }

    /// The corpus. `marker` is a path no row may ever create (the shell-injection rows try to).
    static func rows(marker: String) -> [Row] {
        let echo = #""action":"echo""#
        let deepArrays = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        let deepObjects = String(repeating: #"{"a":"#, count: 1000) + "1" + String(repeating: "}", count: 1000)
        let id256 = String(repeating: "i", count: 256)
        let name257 = String(repeating: "n", count: 257)
        let args257 = Array(repeating: #""x""#, count: 257).joined(separator: ",")
        let atMax = paddedEcho(id: "max", length: maxLine)
        let atMaxCRLF = paddedEcho(id: "maxcrlf", length: maxLine, terminator: [0x0D, 0x0A])
        let overMax = paddedEcho(id: "over", length: maxLine + 1)
        let tenMB = 10 << 20
        return [
            // Encoding: invalid UTF-8 anywhere, surrogates, a BOM.
            Row(name: "invalid-utf8-bare-bytes", bytes: [0xFF, 0xFE, 0x00, 0x01, 0x0A], id: nil, expect: .error("bad_request")),
            Row(name: "invalid-utf8-in-string", bytes: splice(#"{"id":1,"op":"ping","x":""#, [0xC3, 0x28], #""}"#), id: nil, expect: .error("bad_request")),
            Row(name: "overlong-utf8-slash", bytes: splice(#"{"id":2,"op":"submit",\#(echo),"args":[""#, [0xC0, 0xAF], #""]}"#), id: nil, expect: .error("bad_request")),
            Row(name: "utf8-encoded-surrogate", bytes: splice(#"{"id":3,"op":"submit",\#(echo),"args":[""#, [0xED, 0xA0, 0x80], #""]}"#), id: nil, expect: .error("bad_request")),
            Row(name: "truncated-utf8-sequence", bytes: splice(#"{"id":4,"op":"ping","x":""#, [0xE2, 0x82], #""}"#), id: nil, expect: .error("bad_request")),
            Row(name: "utf8-beyond-U+10FFFF", bytes: splice(#"{"id":5,"op":"ping","x":""#, [0xF4, 0x90, 0x80, 0x80], #""}"#), id: nil, expect: .error("bad_request")),
            Row(name: "lone-high-surrogate-in-id", bytes: line(#"{"id":"\ud800","op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "lone-low-surrogate-in-arg", bytes: submit(6, #"\#(echo),"args":["\udc00"]"#), id: nil, expect: .error("bad_request")),
            Row(name: "reversed-surrogate-pair", bytes: submit(7, #"\#(echo),"args":["\udc00\ud800"]"#), id: nil, expect: .error("bad_request")),
            Row(name: "high-surrogate-then-letter", bytes: submit(8, #"\#(echo),"args":["\ud800\u0041"]"#), id: nil, expect: .error("bad_request")),
            Row(name: "valid-surrogate-pair", bytes: submit(9, #"\#(echo),"args":["\ud83d\ude00"]"#), id: 9, expect: .ok([("result.output", "😀")])),
            Row(name: "byte-order-mark", bytes: splice("", [0xEF, 0xBB, 0xBF], #"{"id":10,"op":"ping"}"#), id: nil, expect: .error("bad_request")),

            // NUL: raw (a control character, invalid JSON) and escaped (valid JSON, refused in names and args).
            Row(name: "raw-nul-in-string", bytes: splice(#"{"id":11,"op":"submit",\#(echo),"args":["a"#, [0x00], #"b"]}"#), id: nil, expect: .error("bad_request")),
            Row(name: "raw-nul-between-tokens", bytes: splice(#"{"id":12,"#, [0x00], #""op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "escaped-nul-in-arg", bytes: submit(13, #"\#(echo),"args":["a\u0000b"]"#), id: 13, expect: .error("bad_request")),
            Row(name: "escaped-nul-in-action", bytes: submit(14, #""action":"echo\u0000""#), id: 14, expect: .error("bad_request")),
            Row(name: "escaped-nul-in-worker", bytes: submit(15, #"\#(echo),"worker":"w1\u0000""#), id: 15, expect: .error("bad_request")),
            Row(name: "escaped-nul-in-job", bytes: line(#"{"id":16,"op":"status","job":"x\u0000"}"#), id: 16, expect: .error("bad_request")),
            Row(name: "escaped-nul-in-exec-arg", bytes: submit(17, #""action":"argv","args":["\u0000"]"#), id: 17, expect: .error("bad_request")),
            Row(name: "escaped-nul-in-id-echoed", bytes: line(#"{"id":"a\u0000b","op":"ping"}"#), id: "a\u{0}b", expect: .ok([("version", .string(LoopdVersion.current))])),

            // Framing: empty and blank lines, CR handling, several documents on a line.
            Row(name: "empty-line", bytes: [0x0A], id: nil, expect: .error("bad_request")),
            Row(name: "whitespace-only-line", bytes: Array(" \t  \r\n".utf8), id: nil, expect: .error("bad_request")),
            Row(name: "crlf-ending", bytes: Array(#"{"id":"crlf","op":"ping"}"#.utf8) + [0x0D, 0x0A], id: "crlf", expect: .ok([("version", .string(LoopdVersion.current))])),
            Row(name: "cr-cr-lf-ending", bytes: Array(#"{"id":"crcr","op":"ping"}"#.utf8) + [0x0D, 0x0D, 0x0A], id: "crcr", expect: .ok([("version", .string(LoopdVersion.current))])),
            Row(name: "bare-cr-joins-two-requests", bytes: splice(#"{"id":18,"op":"ping"}"#, [0x0D], #"{"id":19,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "two-objects-on-a-line", bytes: line(#"{"id":20,"op":"ping"}{"id":21,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "trailing-garbage", bytes: line(#"{"id":22,"op":"ping"} x"#), id: nil, expect: .error("bad_request")),
            Row(name: "trailing-comma", bytes: line(#"{"id":23,"op":"ping",}"#), id: nil, expect: .error("bad_request")),
            Row(name: "single-quotes", bytes: line(#"{'id':24,'op':'ping'}"#), id: nil, expect: .error("bad_request")),
            Row(name: "unterminated-object", bytes: line(#"{"id":25,"op":"ping""#), id: nil, expect: .error("bad_request")),
            Row(name: "comment-after-object", bytes: line(#"{"id":26,"op":"ping"} // hi"#), id: nil, expect: .error("bad_request")),
            Row(name: "array-not-object", bytes: line(#"[{"id":27,"op":"ping"}]"#), id: nil, expect: .error("bad_request")),
            Row(name: "string-not-object", bytes: line(#""ping""#), id: nil, expect: .error("bad_request")),
            Row(name: "null-not-object", bytes: line("null"), id: nil, expect: .error("bad_request")),
            Row(name: "nan-literal", bytes: submit(28, #"\#(echo),"delay_ms":NaN"#), id: nil, expect: .error("bad_request")),
            Row(name: "infinity-literal", bytes: submit(29, #"\#(echo),"timeout_ms":Infinity"#), id: nil, expect: .error("bad_request")),

            // Nesting far beyond the 32 levels the parser allows.
            Row(name: "deep-nesting-1000-arrays", bytes: line(#"{"id":30,"op":"ping","x":\#(deepArrays)}"#), id: nil, expect: .error("bad_request")),
            Row(name: "deep-nesting-1000-objects", bytes: line(deepObjects), id: nil, expect: .error("bad_request")),
            Row(name: "unclosed-nesting-60000", bytes: line(String(repeating: "[", count: 60_000)), id: nil, expect: .error("bad_request")),

            // Numbers: out of range for a double, for Int64, for the field.
            Row(name: "delay-1e400", bytes: submit(31, #"\#(echo),"delay_ms":1e400"#), id: nil, expect: .error("bad_request")),
            Row(name: "timeout-1e400", bytes: submit(32, #"\#(echo),"timeout_ms":1e400"#), id: nil, expect: .error("bad_request")),
            Row(name: "delay-20-digits", bytes: submit(33, #"\#(echo),"delay_ms":99999999999999999999"#), id: 33, expect: .error("bad_request")),
            Row(name: "id-20-digits", bytes: line(#"{"id":99999999999999999999,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "id-int64-min-echoed", bytes: line(#"{"id":-9223372036854775808,"op":"ping"}"#), id: .integer(.min), expect: .ok([("version", .string(LoopdVersion.current))])),
            Row(name: "delay-negative", bytes: submit(34, #"\#(echo),"delay_ms":-1"#), id: 34, expect: .error("bad_request")),
            Row(name: "delay-over-a-day", bytes: submit(35, #"\#(echo),"delay_ms":86400001"#), id: 35, expect: .error("bad_request")),
            Row(name: "delay-int64-min", bytes: submit(36, #"\#(echo),"delay_ms":-9223372036854775808"#), id: 36, expect: .error("bad_request")),
            Row(name: "delay-fraction", bytes: submit(37, #"\#(echo),"delay_ms":1.5"#), id: 37, expect: .error("bad_request")),
            Row(name: "delay-integer-as-exponent", bytes: submit(38, #"\#(echo),"delay_ms":1e2"#), id: 38, expect: .error("bad_request")),
            Row(name: "delay-as-string", bytes: submit(39, #"\#(echo),"delay_ms":"100""#), id: 39, expect: .error("bad_request")),
            Row(name: "delay-negative-zero-is-zero", bytes: submit(40, #"\#(echo),"args":["nz"],"delay_ms":-0"#), id: 40, expect: .ok([("state", "completed"), ("result.output", "nz")])),
            Row(name: "timeout-zero", bytes: submit(41, #"\#(echo),"timeout_ms":0"#), id: 41, expect: .error("bad_request")),
            Row(name: "timeout-negative", bytes: submit(42, #"\#(echo),"timeout_ms":-5"#), id: 42, expect: .error("bad_request")),
            Row(name: "timeout-int64-max", bytes: submit(43, #"\#(echo),"timeout_ms":9223372036854775807"#), id: 43, expect: .error("bad_request")),
            Row(name: "sleep-negative-arg", bytes: submit(44, #""action":"sleep","args":["-1"]"#), id: 44, expect: .error("bad_request")),
            Row(name: "sleep-20-digit-arg", bytes: submit(45, #""action":"sleep","args":["99999999999999999999"]"#), id: 45, expect: .error("bad_request")),
            Row(name: "sleep-exponent-arg", bytes: submit(46, #""action":"sleep","args":["1e3"]"#), id: 46, expect: .error("bad_request")),
            Row(name: "sleep-over-a-day", bytes: submit(47, #""action":"sleep","args":["86400001"]"#), id: 47, expect: .error("bad_request")),

            // Wrong types for every field.
            Row(name: "op-number", bytes: line(#"{"id":50,"op":1}"#), id: 50, expect: .error("bad_request")),
            Row(name: "op-missing", bytes: line(#"{"id":51}"#), id: 51, expect: .error("bad_request")),
            Row(name: "op-null", bytes: line(#"{"id":52,"op":null}"#), id: 52, expect: .error("bad_request")),
            Row(name: "op-array", bytes: line(#"{"id":53,"op":["ping"]}"#), id: 53, expect: .error("bad_request")),
            Row(name: "op-object", bytes: line(#"{"id":54,"op":{"ping":true}}"#), id: 54, expect: .error("bad_request")),
            Row(name: "id-bool", bytes: line(#"{"id":true,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "id-fraction", bytes: line(#"{"id":1.5,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "id-array", bytes: line(#"{"id":[1],"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "id-object", bytes: line(#"{"id":{"a":1},"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            // PROTOCOL.md: "id neither string nor integer" is bad_request, and null is neither.
            Row(name: "id-null", bytes: line(#"{"id":null,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "id-257-bytes", bytes: line(#"{"id":"\#(name257)","op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "id-256-bytes-echoed", bytes: line(#"{"id":"\#(id256)","op":"ping"}"#), id: .string(id256), expect: .ok([("version", .string(LoopdVersion.current))])),
            Row(name: "action-number", bytes: submit(55, #""action":7"#), id: 55, expect: .error("bad_request")),
            Row(name: "action-empty", bytes: submit(56, #""action":"""#), id: 56, expect: .error("bad_request")),
            Row(name: "action-257-bytes", bytes: submit(57, #""action":"\#(name257)""#), id: 57, expect: .error("bad_request")),
            Row(name: "action-missing", bytes: submit(58, #""args":["x"]"#), id: 58, expect: .error("bad_request")),
            Row(name: "args-string", bytes: submit(59, #"\#(echo),"args":"a b""#), id: 59, expect: .error("bad_request")),
            Row(name: "args-object", bytes: submit(60, #"\#(echo),"args":{"0":"a"}"#), id: 60, expect: .error("bad_request")),
            Row(name: "args-number-element", bytes: submit(61, #"\#(echo),"args":[1]"#), id: 61, expect: .error("bad_request")),
            Row(name: "args-null-element", bytes: submit(62, #"\#(echo),"args":[null]"#), id: 62, expect: .error("bad_request")),
            Row(name: "args-nested-array", bytes: submit(63, #"\#(echo),"args":[["x"]]"#), id: 63, expect: .error("bad_request")),
            Row(name: "args-257-items", bytes: submit(64, #"\#(echo),"args":[\#(args257)]"#), id: 64, expect: .error("bad_request")),
            Row(name: "worker-number", bytes: submit(65, #"\#(echo),"worker":1"#), id: 65, expect: .error("bad_request")),
            Row(name: "worker-empty", bytes: submit(66, #"\#(echo),"worker":"""#), id: 66, expect: .error("bad_request")),
            Row(name: "worker-and-key", bytes: submit(67, #"\#(echo),"worker":"w1","key":"k""#), id: 67, expect: .error("bad_request")),
            Row(name: "key-bool", bytes: submit(68, #"\#(echo),"key":false"#), id: 68, expect: .error("bad_request")),
            Row(name: "wait-string", bytes: submit(69, #"\#(echo),"wait":"yes""#), id: 69, expect: .error("bad_request")),
            Row(name: "wait-number", bytes: submit(70, #"\#(echo),"wait":1"#), id: 70, expect: .error("bad_request")),
            Row(name: "durable-string", bytes: submit(71, #"\#(echo),"durable":"true""#), id: 71, expect: .error("bad_request")),
            Row(name: "mode-number", bytes: submit(72, #"\#(echo),"mode":5"#), id: 72, expect: .error("bad_request")),
            Row(name: "status-job-number", bytes: line(#"{"id":73,"op":"status","job":123}"#), id: 73, expect: .error("bad_request")),
            Row(name: "status-job-missing", bytes: line(#"{"id":74,"op":"status"}"#), id: 74, expect: .error("bad_request")),
            Row(name: "inspect-worker-array", bytes: line(#"{"id":75,"op":"inspect","worker":["w1"]}"#), id: 75, expect: .error("bad_request")),
            Row(name: "mode-op-mode-object", bytes: line(#"{"id":76,"op":"mode","worker":"w1","mode":{}}"#), id: 76, expect: .error("bad_request")),
            Row(name: "mode-op-common", bytes: line(#"{"id":77,"op":"mode","worker":"w1","mode":"common"}"#), id: 77, expect: .error("bad_request")),
            Row(name: "unknown-field", bytes: submit(78, #"\#(echo),"colour":"blue""#), id: 78, expect: .error("bad_request")),
            Row(name: "unknown-field-null", bytes: line(#"{"id":79,"op":"ping","x":null}"#), id: 79, expect: .error("bad_request")),
            Row(name: "field-of-another-op", bytes: line(#"{"id":80,"op":"ping","job":"x"}"#), id: 80, expect: .error("bad_request")),

            // Duplicate members, also when only their escapes differ.
            Row(name: "duplicate-op", bytes: line(#"{"id":81,"op":"ping","op":"stats"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "duplicate-id", bytes: line(#"{"id":82,"id":83,"op":"ping"}"#), id: nil, expect: .error("bad_request")),
            Row(name: "duplicate-via-escape", bytes: line(#"{"id":84,"op":"ping","o\u0070":"ping"}"#), id: nil, expect: .error("bad_request")),

            // Unknown operations.
            Row(name: "op-unknown", bytes: line(#"{"id":85,"op":"frobnicate"}"#), id: 85, expect: .error("unknown_op")),
            Row(name: "op-wrong-case", bytes: line(#"{"id":86,"op":"PING"}"#), id: 86, expect: .error("unknown_op")),
            Row(name: "op-trailing-space", bytes: line(#"{"id":87,"op":"ping "}"#), id: 87, expect: .error("unknown_op")),
            Row(name: "op-empty", bytes: line(#"{"id":88,"op":""}"#), id: 88, expect: .error("unknown_op")),
            Row(name: "op-with-nul", bytes: line(#"{"id":89,"op":"ping\u0000"}"#), id: 89, expect: .error("unknown_op")),
            Row(name: "op-10-kb", bytes: line(#"{"id":90,"op":"\#(String(repeating: "x", count: 10_240))"}"#), id: 90, expect: .error("unknown_op")),

            // Names that look like paths or other things, never resolved as such.
            Row(name: "action-absolute-path", bytes: submit(91, #""action":"/bin/sh","args":["-c","id"]"#), id: 91, expect: .error("unknown_action")),
            Row(name: "action-dotdot-path", bytes: submit(92, #""action":"../../bin/sh""#), id: 92, expect: .error("unknown_action")),
            Row(name: "action-stall-without-debug", bytes: submit(93, #""action":"stall","args":["10"]"#), id: 93, expect: .error("unknown_action")),
            Row(name: "action-wrong-case", bytes: submit(94, #""action":"ECHO""#), id: 94, expect: .error("unknown_action")),
            Row(name: "worker-unknown", bytes: submit(95, #"\#(echo),"worker":"w9""#), id: 95, expect: .error("unknown_worker")),
            Row(name: "worker-dotdot", bytes: submit(96, #"\#(echo),"worker":"../w1""#), id: 96, expect: .error("unknown_worker")),
            Row(name: "inspect-unknown-worker", bytes: line(#"{"id":97,"op":"inspect","worker":"w1/../w2"}"#), id: 97, expect: .error("unknown_worker")),
            Row(name: "mode-unknown-worker", bytes: line(#"{"id":98,"op":"mode","worker":"*","mode":"x"}"#), id: 98, expect: .error("unknown_worker")),
            Row(name: "status-path-as-job", bytes: line(#"{"id":99,"op":"status","job":"../../etc/passwd"}"#), id: 99, expect: .error("unknown_job")),
            Row(name: "cancel-unknown-job", bytes: line(#"{"id":100,"op":"cancel","job":"*"}"#), id: 100, expect: .error("unknown_job")),
            Row(name: "wait-path-as-job", bytes: line(#"{"id":120,"op":"wait","job":"../../etc/passwd","timeout_ms":1}"#), id: 120, expect: .error("unknown_job")),
            Row(name: "jobs-worker-dotdot", bytes: line(#"{"id":121,"op":"jobs","worker":"../w1"}"#), id: 121, expect: .error("unknown_worker")),

            // The listing and waiting requests, malformed.
            Row(name: "wait-job-missing", bytes: line(#"{"id":122,"op":"wait"}"#), id: 122, expect: .error("bad_request")),
            Row(name: "wait-timeout-zero", bytes: line(#"{"id":123,"op":"wait","job":"x","timeout_ms":0}"#), id: 123, expect: .error("bad_request")),
            Row(name: "wait-timeout-fraction", bytes: line(#"{"id":124,"op":"wait","job":"x","timeout_ms":1.5}"#), id: 124, expect: .error("bad_request")),
            Row(name: "wait-timeout-over-a-day", bytes: line(#"{"id":125,"op":"wait","job":"x","timeout_ms":86400001}"#), id: 125, expect: .error("bad_request")),
            Row(name: "jobs-limit-zero", bytes: line(#"{"id":126,"op":"jobs","limit":0}"#), id: 126, expect: .error("bad_request")),
            Row(name: "jobs-limit-huge", bytes: line(#"{"id":127,"op":"jobs","limit":99999999999999999999}"#), id: 127, expect: .error("bad_request")),
            Row(name: "jobs-state-unknown", bytes: line(#"{"id":128,"op":"jobs","state":"exploded"}"#), id: 128, expect: .error("bad_request")),
            Row(name: "jobs-state-nested", bytes: line(#"{"id":129,"op":"jobs","state":[["queued"]]}"#), id: 129, expect: .error("bad_request")),
            Row(name: "jobs-since-garbage", bytes: line(#"{"id":130,"op":"jobs","since":"yesterday"}"#), id: 130, expect: .error("bad_request")),
            Row(name: "jobs-since-number", bytes: line(#"{"id":131,"op":"jobs","since":1700000000}"#), id: 131, expect: .error("bad_request")),
            Row(name: "jobs-cursor-forged", bytes: line(#"{"id":132,"op":"jobs","cursor":"0-/zzzzzzzzzzzzzzzzzz"}"#), id: 132, expect: .error("bad_request")),
            Row(name: "jobs-unknown-field", bytes: line(#"{"id":133,"op":"jobs","job":"x"}"#), id: 133, expect: .error("bad_request")),
            Row(name: "jobs-empty-list", bytes: line(#"{"id":134,"op":"jobs","action":"nothing-ran"}"#), id: 134, expect: .ok([("next_cursor", .null)])),

            // Schedules: the daemon here declares none.
            Row(name: "schedules-extra-field", bytes: line(#"{"id":135,"op":"schedules","schedule":"x"}"#), id: 135, expect: .error("bad_request")),
            Row(name: "trigger-no-name", bytes: line(#"{"id":136,"op":"trigger"}"#), id: 136, expect: .error("bad_request")),
            Row(name: "pause-name-number", bytes: line(#"{"id":137,"op":"pause","schedule":7}"#), id: 137, expect: .error("bad_request")),
            Row(name: "resume-empty-name", bytes: line(#"{"id":138,"op":"resume","schedule":""}"#), id: 138, expect: .error("bad_request")),
            Row(name: "trigger-unknown", bytes: line(#"{"id":139,"op":"trigger","schedule":"../etc"}"#), id: 139, expect: .error("unknown_schedule")),
            Row(name: "retry-job-and-filter", bytes: line(#"{"id":141,"op":"retry","job":"x","action":"echo"}"#), id: 141, expect: .error("bad_request")),
            Row(name: "retry-running-state", bytes: line(#"{"id":142,"op":"retry","state":"running"}"#), id: 142, expect: .error("bad_request")),
            Row(name: "discard-cursor", bytes: line(#"{"id":143,"op":"discard","cursor":"abc"}"#), id: 143, expect: .error("bad_request")),
            Row(name: "discard-path-as-job", bytes: line(#"{"id":144,"op":"discard","job":"../../etc/passwd"}"#), id: 144, expect: .error("unknown_job")),
            Row(name: "retry-nothing-failed", bytes: line(#"{"id":145,"op":"retry","action":"nothing-ran"}"#), id: 145, expect: .ok([("more", false)])),
            Row(name: "schedules-empty", bytes: line(#"{"id":140,"op":"schedules"}"#), id: 140, expect: .ok([("schedules", .array([]))])),

            // argv injection against the exec action `argv` = /usr/bin/printf "%s|" + client args:
            // each argument must come back verbatim, as one argv entry, and no shell may run.
            Row(name: "argv-shell-metacharacters", bytes: submit(101, #""action":"argv","args":[";id","&& id","| id","$(id)","`id`","$HOME","*","a\nb"]"#),
                id: 101, expect: .ok([("result.stdout", ";id|&& id|| id|$(id)|`id`|$HOME|*|a\nb|"), ("result.exit_code", 0)])),
            Row(name: "argv-marker-commands", bytes: submit(102, #""action":"argv","args":["$(touch \#(marker))","`touch \#(marker)`","; touch \#(marker)","| touch \#(marker)","&& touch \#(marker)"]"#),
                id: 102, expect: .ok([("result.stdout", .string("$(touch \(marker))|`touch \(marker)`|; touch \(marker)|| touch \(marker)|&& touch \(marker)|")), ("result.exit_code", 0)])),
            Row(name: "argv-option-injection", bytes: submit(103, #""action":"argv","args":["--","-x","--help","-v","--version"]"#),
                id: 103, expect: .ok([("result.stdout", "--|-x|--help|-v|--version|"), ("result.exit_code", 0)])),
            Row(name: "argv-path-tricks", bytes: submit(104, #""action":"argv","args":["../../etc/passwd","/etc/shadow","~root","./x","/proc/self/environ"]"#),
                id: 104, expect: .ok([("result.stdout", "../../etc/passwd|/etc/shadow|~root|./x|/proc/self/environ|"), ("result.exit_code", 0)])),
            Row(name: "argv-format-string", bytes: submit(105, #""action":"argv","args":["%s%n%x%%","\\x41","%b"]"#),
                id: 105, expect: .ok([("result.stdout", "%s%n%x%%|\\x41|%b|"), ("result.exit_code", 0)])),
            Row(name: "argv-spaces-and-unicode-stay-one-entry", bytes: submit(106, #""action":"argv","args":["a b"," ","é😀","","x=y z"]"#),
                id: 106, expect: .ok([("result.stdout", "a b| |é😀||x=y z|"), ("result.exit_code", 0)])),
            Row(name: "argv-more-than-max-client-args", bytes: submit(107, #""action":"argv","args":["1","2","3","4","5","6","7","8","9"]"#), id: 107, expect: .error("bad_request")),
            Row(name: "argv-args-to-fixed-exec", bytes: submit(108, #""action":"fixed","args":["--help"]"#), id: 108, expect: .error("bad_request")),
            Row(name: "argv-override-field", bytes: submit(109, #""action":"argv","argv":["/bin/sh","-c","id"]"#), id: 109, expect: .error("bad_request")),
            Row(name: "env-override-field", bytes: submit(110, #""action":"argv","env":{"LD_PRELOAD":"/tmp/x.so"}"#), id: 110, expect: .error("bad_request")),
            Row(name: "cwd-override-field", bytes: submit(111, #""action":"argv","cwd":"/root""#), id: 111, expect: .error("bad_request")),

            // Line length: the limit itself, one byte over, and 10 MB.
            Row(name: "line-exactly-max", bytes: atMax.bytes, id: "max", expect: .ok([("result.output", .string(atMax.arg))])),
            Row(name: "line-exactly-max-crlf", bytes: atMaxCRLF.bytes, id: "maxcrlf", expect: .ok([("result.output", .string(atMaxCRLF.arg))])),
            Row(name: "line-max-plus-one", bytes: overMax.bytes, id: nil, expect: .tooLarge),
            Row(name: "line-10-mb-json", bytes: line(#"{"id":112,"op":"submit","action":"echo","args":[""# + String(repeating: "B", count: tenMB) + #""]}"#), id: nil, expect: .tooLarge),
            Row(name: "line-10-mb-no-newline", bytes: [UInt8](repeating: 0x43, count: tenMB), id: nil, expect: .tooLarge),
        ]
    }

    /// The value at a dotted path (`result.stdout`).
    static func value(_ path: String, in reply: JSON) -> JSON? {
        path.split(separator: ".").reduce(reply as JSON?) { $0?[String($1)] }
    }

    /// Sends one row on a fresh connection and checks what comes back.
    static func check(_ row: Row, on d: RunningDaemon) throws {
        let c = try d.client()
        var tv = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        c.send(raw: row.bytes)
        let reply = try #require(c.readReply(), "\(row.name): no reply")
        #expect(reply["id"] == row.id, "\(row.name): id \(String(describing: reply["id"])), expected \(row.id)")
        switch row.expect {
        case .error(let code):
            #expect(reply.ok == false && reply.errorCode == code, "\(row.name): \(reply.serialized())")
        case .ok(let fields):
            #expect(reply.ok == true, "\(row.name): \(reply.serialized().prefix(300))")
            for (path, expected) in fields {
                #expect(value(path, in: reply) == expected, "\(row.name): \(path) in \(reply.serialized().prefix(300))")
            }
        case .tooLarge:
            #expect(reply.errorCode == "too_large", "\(row.name): \(reply.serialized())")
            #expect(c.isClosedByPeer(), "\(row.name): the connection stayed open after too_large")
            return
        }
        // Framing survived: the same connection still answers.
        #expect(c.call(#"{"id":"alive","op":"ping"}"#)?["id"] == "alive", "\(row.name): the connection is not usable afterwards")
    }

    @Test func everyHostileRequestGetsItsDocumentedAnswerWhileAControlClientIsServed() throws {
        let d = RunningDaemon { config in
            var printf = DaemonConfig.Exec(argv: ["/usr/bin/printf", "%s|"])
            printf.maxClientArgs = 8
            printf.timeoutMs = 600_000  // a bound, never reached: no row expects a timeout
            config.actions["argv"] = DaemonConfig.Action(allowAnyUser: true, exec: printf)
            config.actions["fixed"] = DaemonConfig.Action(allowAnyUser: true, exec: DaemonConfig.Exec(argv: ["/bin/echo", "fixed"]))
        }
        defer { d.stop() }
        let marker = d.directory + "/shell-ran"
        let rows = Self.rows(marker: marker)
        #expect(rows.count >= 50)

        let control = ControlClient(socketPath: d.socketPath)
        control.start()

        for row in rows { try Self.check(row, on: d) }
        try pipelinedFloodIsAnsweredRequestByRequest(d)
        try clientsThatVanishLeaveNoTrace(d)

        let report = control.finish()
        #expect(report.failures.isEmpty, "control client: \(report.failures.prefix(5))")
        #expect(report.completed >= 20, "the control client ran only \(report.completed) jobs")
        #expect(report.completed == report.submitted)
        #expect(!FileManager.default.fileExists(atPath: marker), "a shell ran a client argument")
        let ping = try #require(try d.client().call(#"{"id":"end","op":"ping"}"#))
        #expect(ping.ok == true && ping["id"] == "end")
    }

    /// 5,000 requests (echo, ping and garbage) written at once without reading
    /// a reply; then every reply is read back and matched to its request.
    private func pipelinedFloodIsAnsweredRequestByRequest(_ d: RunningDaemon) throws {
        let count = 5000
        var batch: [UInt8] = []
        for i in 0..<count {
            switch i % 10 {
            case 9: batch += Array("this is not json \(i)\n".utf8)
            case 4: batch += Self.line(#"{"id":\#(i),"op":"ping"}"#)
            default: batch += Self.line(#"{"id":\#(i),"op":"submit","action":"echo","args":["p\#(i)"]}"#)
            }
        }
        let c = try d.client()
        // Written from another thread, so that backpressure could never deadlock the test.
        let fd = c.fd
        let payload = batch
        let sent = DispatchSemaphore(value: 0)
        Thread {
            var off = 0
            while off < payload.count {
                let n = payload[off...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                off += n
            }
            sent.signal()
        }.start()
        #expect(sent.wait(timeout: .now() + 20) == .success, "pipelined-5000: the daemon stopped reading")

        var seen = Set<Int64>()
        var garbage = 0
        for _ in 0..<count {
            let r = try #require(c.readReply(), "pipelined-5000: \(seen.count + garbage) of \(count) replies")
            guard let id = r["id"]?.integerValue else {
                #expect(r["id"] == .null && r.errorCode == "bad_request", "pipelined-5000: \(r.serialized())")
                garbage += 1
                continue
            }
            #expect(seen.insert(id).inserted, "pipelined-5000: id \(id) answered twice")
            if id % 10 == 4 {
                #expect(r["pid"] != nil, "pipelined-5000: \(r.serialized())")
            } else {
                #expect(r["result"]?["output"] == .string("p\(id)"), "pipelined-5000: \(r.serialized())")
            }
        }
        #expect(garbage == count / 10)
        #expect(seen == Set((0..<Int64(count)).filter { $0 % 10 != 9 }))
    }

    /// Clients that leave mid-line, or flood requests and never read a reply.
    private func clientsThatVanishLeaveNoTrace(_ d: RunningDaemon) throws {
        do {
            let half = try d.client()
            half.send(raw: Array(#"{"id":1,"op":"sub"#.utf8))
        }
        do {
            let flood = try d.client()
            var batch: [UInt8] = []
            for i in 0..<3000 { batch += Self.line(#"{"id":\#(i),"op":"submit","action":"echo","args":["gone"]}"#) }
            flood.send(raw: batch)
        }
        let c = try d.client()
        let stats = try #require(c.call(#"{"id":"s","op":"stats"}"#))
        #expect(stats.ok == true)
    }
}

/// The control client: on a thread of its own, submits echo jobs one after
/// another until told to finish, checking each reply's id and output.
final class ControlClient: @unchecked Sendable {
    struct Report {
        var submitted = 0
        var completed = 0
        var failures: [String] = []
    }

    private let socketPath: String
    private let lock = NSLock()
    private var stopping = false  // guarded by lock
    private var report = Report()  // guarded by lock; final once `done` is signalled
    private let done = DispatchSemaphore(value: 0)

    init(socketPath: String) { self.socketPath = socketPath }

    func start() {
        Thread { [self] in
            defer { done.signal() }
            guard let c = try? TestClient(path: socketPath) else {
                record(failure: "cannot connect")
                return
            }
            var n = 0
            while !lock.withLock({ stopping }) {
                n += 1
                lock.withLock { report.submitted += 1 }
                let reply = c.call(#"{"id":"ctl-\#(n)","op":"submit","action":"echo","args":["control","\#(n)"]}"#)
                if let reply, reply["id"] == .string("ctl-\(n)"), reply["state"] == "completed",
                   reply["result"]?["output"] == .string("control \(n)") {
                    lock.withLock { report.completed += 1 }
                } else {
                    record(failure: "job \(n): \(reply?.serialized() ?? "no reply")")
                }
                usleep(2000)
            }
        }.start()
    }

    private func record(failure: String) { lock.withLock { report.failures.append(failure) } }

    /// Stops the stream and returns what it saw (bounded wait).
    func finish() -> Report {
        lock.withLock { stopping = true }
        if done.wait(timeout: .now() + 30) == .timedOut { record(failure: "did not finish") }
        return lock.withLock { report }
    }
}
