import Foundation
import Testing
@testable import LoopdProtocol

/// The one-pass request decoder may only ever agree with the generic one:
/// the same `Request` for a line both read, and a line it cannot read in
/// one pass left to the generic decoder (with its exact error).
@Suite struct OnePassDecoderTests {
    /// Valid requests of every op, written the ways clients write them.
    static let valid: [String] = [
        #"{"id":1,"op":"ping"}"#,
        #"{"op":"ping"}"#,
        #" { "id" : "a b" , "op" : "stats" } "#,
        #"{"id":-0,"op":"workers"}"#,
        #"{"id":-9223372036854775808,"op":"status","job":"m3k2x9a1-17"}"#,
        #"{"id":9223372036854775807,"op":"cancel","job":"j"}"#,
        #"{"id":"x","op":"inspect","worker":"w1"}"#,
        #"{"id":2,"op":"mode","worker":"w1","mode":"maintenance"}"#,
        #"{"id":3,"op":"submit","action":"noop","worker":"any"}"#,
        #"{"id":4,"op":"submit","action":"echo","args":["hello","wörld",""],"worker":"w2"}"#,
        #"{"op":"submit","action":"echo","args":[],"key":"tenant-7","wait":false,"durable":true}"#,
        #"{"op":"submit","action":"sleep","args":["5"],"delay_ms":0,"timeout_ms":1,"mode":"common"}"#,
        #"{"op":"submit","action":"sleep","args":["5"],"delay_ms":86400000,"timeout_ms":86400000}"#,
        "{\"op\":\"submit\",\t\"action\":\"noop\"\r\n}",
        #"{"action":"noop","op":"submit","id":"last"}"#,
    ]

    /// Lines the one-pass decoder must leave to the generic one.
    static let invalid: [String] = [
        "", " ", "{", "}", "{}", "[]", "null", #""ping""#, #"{"op":"ping"} x"#, #"{"op":"ping"}}"#,
        #"{"op":"ping",}"#, #"{"op":"ping""id":1}"#, #"{"op" "ping"}"#, #"{op:"ping"}"#,
        #"{"id":1,"id":2,"op":"ping"}"#, #"{"op":"ping","op":"ping"}"#, #"{"id":null,"op":"ping"}"#,
        #"{"id":1.0,"op":"ping"}"#, #"{"id":1e2,"op":"ping"}"#, #"{"id":01,"op":"ping"}"#, #"{"id":-,"op":"ping"}"#,
        #"{"id":9223372036854775808,"op":"ping"}"#, #"{"id":-9223372036854775809,"op":"ping"}"#,
        #"{"id":true,"op":"ping"}"#, #"{"id":[1],"op":"ping"}"#, #"{"id":{},"op":"ping"}"#,
        #"{"op":"p\u0069ng"}"#, #"{"o\u0070":"ping"}"#, #"{"op":"PING"}"#, #"{"op":"pong"}"#, #"{"op":1}"#,
        #"{"op":null}"#, #"{"id":1}"#, #"{"op":"ping","job":"x"}"#, #"{"op":"ping","extra":1}"#,
        #"{"op":"status"}"#, #"{"op":"status","job":""}"#, #"{"op":"status","job":null}"#, #"{"op":"status","job":7}"#,
        #"{"op":"mode","worker":"w1"}"#, #"{"op":"inspect","worker":"w1","mode":"m"}"#,
        #"{"op":"submit"}"#, #"{"op":"submit","action":""}"#, #"{"op":"submit","action":"a","worker":"w","key":"k"}"#,
        #"{"op":"submit","action":"a","args":"x"}"#, #"{"op":"submit","action":"a","args":[1]}"#,
        #"{"op":"submit","action":"a","args":["\u0000"]}"#, #"{"op":"submit","action":"a","args":[["x"]]}"#,
        #"{"op":"submit","action":"a","args":["x",]}"#, #"{"op":"submit","action":"a","args":[,]}"#,
        #"{"op":"submit","action":"a","wait":"true"}"#, #"{"op":"submit","action":"a","wait":null}"#,
        #"{"op":"submit","action":"a","wait":tru}"#, #"{"op":"submit","action":"a","durable":1}"#,
        #"{"op":"submit","action":"a","delay_ms":-1}"#, #"{"op":"submit","action":"a","delay_ms":86400001}"#,
        #"{"op":"submit","action":"a","timeout_ms":0}"#, #"{"op":"submit","action":"a","timeout_ms":1.5}"#,
        #"{"op":"submit","action":"a","mode":""}"#, #"{"op":"submit","action":"a","job":"j"}"#,
        #"{"op":"submit","action":"\ud800"}"#, #"{"op":"submit","action":"a\"b"}"#,
        "{\"op\":\"submit\",\"action\":\"a\u{1}\"}", "{\"op\":\"ping\"}\u{0B}",
        #"{"op":"submit","action":""# + String(repeating: "a", count: 257) + #""}"#,
        #"{"id":""# + String(repeating: "i", count: 257) + #"","op":"ping"}"#,
        #"{"op":"submit","action":"a","args":["# + Array(repeating: #""x""#, count: 257).joined(separator: ",") + "]}",
    ]

    /// Valid `jobs` and `wait` requests: the one-pass decoder never reads
    /// these ops, so they always reach the generic decoder.
    static let genericOnly: [String] = [
        #"{"id":1,"op":"wait","job":"m3k2x9a1-17"}"#,
        #"{"op":"wait","job":"j","timeout_ms":86400000}"#,
        #"{"id":"w","op":"wait","job":"j","timeout_ms":1}"#,
        #"{"op":"jobs"}"#,
        #"{"id":2,"op":"jobs","state":"held","worker":"w1","action":"sleep","limit":5}"#,
        #"{"op":"jobs","state":["queued","timed_out"],"since":"2026-11-24T07:01:02.345Z","cursor":"c-1"}"#,
        #"{"op":"jobs","since":"2026-11-24T08:01:02+01:00","limit":1000}"#,
    ]

    /// Every door of `decode` (any collection, the slice of a read buffer,
    /// and the server's, which writes the request in place) answers as the
    /// generic decoder does; a line refused leaves the request in place as
    /// it was.
    static func agree(_ bytes: [UInt8]) -> Bool {
        let generic = RequestDecoder.decodeGeneric(bytes)
        let buffer = Array("{\"op\":\"ping\"}\n".utf8) + bytes  // the line after another in the buffer
        let slice = buffer[(buffer.count - bytes.count)...]
        let before = Request(id: .string("before"), operation: .stats)
        var inPlace = before
        let inPlaceAnswer: Result<Request, RequestDecoder.DecodeFailure>
        if let failure = RequestDecoder.decode(slice, into: &inPlace) {
            guard inPlace == before else { return false }
            inPlaceAnswer = .failure(failure)
        } else {
            inPlaceAnswer = .success(inPlace)
        }
        return RequestDecoder.decode(bytes) == generic && RequestDecoder.decode(slice) == generic && inPlaceAnswer == generic
    }

    static func onePass(_ bytes: [UInt8]) -> Request? {
        bytes.withUnsafeBufferPointer { RequestDecoder.decodeOnePass($0) }
    }

    @Test func plainRequestsAreReadInOnePass() {
        for line in Self.valid {
            let bytes = Array(line.utf8)
            guard case .success(let generic) = RequestDecoder.decodeGeneric(bytes) else {
                Issue.record("the generic decoder refuses \(line)")
                continue
            }
            #expect(Self.onePass(bytes) == generic, "\(line)")
        }
    }

    @Test func everythingElseIsLeftToTheGenericDecoder() {
        for line in Self.invalid {
            let bytes = Array(line.utf8)
            if case .success = RequestDecoder.decodeGeneric(bytes) {
                #expect(Self.onePass(bytes) != nil || Self.agree(bytes), "\(line)")
            } else {
                #expect(Self.onePass(bytes) == nil, "\(line)")
            }
            #expect(Self.agree(bytes), "\(line)")
        }
        // Invalid UTF-8 and raw NUL bytes inside strings.
        for raw: [UInt8] in [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x00], [0xC3, 0xA9]] {
            let line = Array(#"{"op":"submit","action":"a"#.utf8) + raw + Array(#""}"#.utf8)
            #expect(Self.agree(line))
        }
    }

    @Test func jobsAndWaitAreLeftToTheGenericDecoder() {
        for line in Self.genericOnly {
            let bytes = Array(line.utf8)
            guard case .success = RequestDecoder.decodeGeneric(bytes) else {
                Issue.record("the generic decoder refuses \(line)")
                continue
            }
            #expect(Self.onePass(bytes) == nil, "\(line)")
            #expect(Self.agree(bytes), "\(line)")
        }
    }

    /// Every line one edit away from a valid request: a byte dropped, a
    /// byte replaced by one of the bytes that matter to JSON, a cut.
    @Test func oneEditAwayTheyAgree() {
        #expect(Self.editsAgree(Self.valid) > 10_000)
    }

    /// Every byte value inside a string, in a member name and in a value:
    /// the byte table the one-pass scanner reads strings by stops where
    /// the generic decoder would judge.
    @Test func everyByteInsideAStringAgrees() {
        for b in UInt8.min...UInt8.max {
            let value = Array(#"{"op":"submit","action":"a"#.utf8) + [b] + Array(#"b"}"#.utf8)
            #expect(Self.agree(value), "byte \(b) in a value")
            let name = Array(#"{"op":"ping","i"#.utf8) + [b] + Array(#"d":1}"#.utf8)
            #expect(Self.agree(name), "byte \(b) in a name")
        }
    }

    /// The same for `jobs` and `wait` lines (edits that turn them into a
    /// plain request of another op included).
    @Test func oneEditAwayFromJobsAndWaitTheyAgree() {
        #expect(Self.editsAgree(Self.genericOnly) > 5_000)
    }

    /// Checks every one-byte edit of `lines`; returns how many were checked.
    static func editsAgree(_ lines: [String]) -> Int {
        let replacements = Array(#"{}[]:,"\ 0-19eE.tfn"#.utf8) + [0x00, 0x0A, 0x80, 0xFF]
        var checked = 0
        for line in lines {
            let bytes = Array(line.utf8)
            for k in bytes.indices {
                var dropped = bytes
                dropped.remove(at: k)
                #expect(Self.agree(dropped), "\(String(decoding: dropped, as: UTF8.self))")
                #expect(Self.agree(Array(bytes[..<k])))
                for r in replacements where r != bytes[k] {
                    var changed = bytes
                    changed[k] = r
                    #expect(Self.agree(changed), "\(String(decoding: changed, as: UTF8.self))")
                    checked += 1
                }
            }
        }
        return checked
    }

    /// The fuzz corpus (Fuzz/corpus/FuzzRequestDecoder) too.
    @Test func fuzzCorpusAgrees() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = root.appendingPathComponent("Fuzz/corpus/FuzzRequestDecoder")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!files.isEmpty)
        for name in files {
            let bytes = try #require(Self.readFile(dir.appendingPathComponent(name).path), "\(name)")
            #expect(Self.agree(bytes), "\(name)")
        }
    }

    /// A file's bytes through plain read(2). Foundation's `Data(contentsOf:)`
    /// leaks a 4 KiB buffer on an empty file (the corpus has one), which
    /// fails the AddressSanitizer run.
    static func readFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { out += chunk[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            return n == 0 ? out : nil
        }
    }
}
