// libFuzzer target for the request decoder (docs/RELIABILITY.md, "Fuzzing").
//
// Each input is one request line. The target checks that:
// - `RequestDecoder.decode` never traps, whatever the bytes;
// - a refusal carries only the codes the decoder may give (`bad_request`,
//   `unknown_op`), and its error reply is one line of JSON that parses back;
// - every document `JSONParser` accepts serializes to compact JSON without a
//   raw newline that parses back to the same value;
// - a request that decodes, written back as a request line, decodes to the
//   same `Request`;
// - the decoder's answer (its one-pass reading of plain requests included)
//   is exactly the generic tree-building decoder's.
//
// Built with `-sanitize=fuzzer` and `-D LOOPD_LIBFUZZER` (Fuzz/run.sh), libFuzzer
// supplies `main`; in an ordinary build the `@main` below replays files
// instead: `FuzzRequestDecoder Fuzz/corpus/FuzzRequestDecoder/*`.
import Glibc
import LoopdProtocol
import FuzzReplay

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = UnsafeBufferPointer(start: data, count: size)
    checkJSONRoundTrip(line)
    let answer = RequestDecoder.decode(line)
    precondition(answer == RequestDecoder.decodeGeneric(line), "the one-pass decoder disagrees with the generic one")
    switch answer {
    case .success(let request):
        let again = encode(request)
        guard case .success(let decoded) = RequestDecoder.decode(Array(again.utf8)) else {
            fatalError("re-encoded request does not decode: \(again)")
        }
        precondition(decoded == request, "re-encoded request decodes differently: \(again)")
    case .failure(let failure):
        precondition(
            failure.error.code == .badRequest || failure.error.code == .unknownOp,
            "the decoder refused with \(failure.error.code)")
        checkReply(Response.error(id: failure.id, failure.error))
    }
    return 0
}

/// A parsed document, written compactly, parses back to the same value.
private func checkJSONRoundTrip(_ line: UnsafeBufferPointer<UInt8>) {
    guard let value = try? JSONParser.parse(line) else { return }
    let text = value.serialized()
    precondition(!text.utf8.contains(0x0A), "serialized JSON contains a raw newline")
    guard let back = try? JSONParser.parse(Array(text.utf8)) else { fatalError("serialized JSON does not parse: \(text)") }
    precondition(back == value, "JSON round trip changed the value: \(text)")
}

/// A reply is exactly one line of JSON.
private func checkReply(_ reply: String) {
    let bytes = Array(reply.utf8)
    precondition(bytes.last == 0x0A, "a reply does not end with its newline")
    precondition(!bytes.dropLast().contains(0x0A), "a reply spans more than one line")
    guard (try? JSONParser.parse(bytes.dropLast())) != nil else { fatalError("a reply is not JSON: \(reply)") }
}

/// A query's filters and limit, every one explicit.
private func filters(_ q: JobsQuery) -> [(String, JSON)] {
    [("state", q.states.map { .array($0.map { .string($0.rawValue) }) } ?? .null),
     ("worker", q.worker.map { .string($0) } ?? .null),
     ("action", q.action.map { .string($0) } ?? .null),
     ("since", q.submittedSinceUnixMs.map { .string(Timestamp.format(unixMilliseconds: $0)) } ?? .null),
     ("limit", .integer(Int64(q.limit)))]
}

/// The request line a client would send for `request` (every field explicit).
private func encode(_ request: Request) -> String {
    var members: [(String, JSON)] = []
    if let id = request.id { members.append(("id", id.json)) }
    switch request.operation {
    case .ping: members.append(("op", "ping"))
    case .workers: members.append(("op", "workers"))
    case .stats: members.append(("op", "stats"))
    case .metrics: members.append(("op", "metrics"))
    case .status(let job): members += [("op", "status"), ("job", .string(job))]
    case .cancel(let job): members += [("op", "cancel"), ("job", .string(job))]
    case .inspect(let worker): members += [("op", "inspect"), ("worker", .string(worker))]
    case .mode(let worker, let mode): members += [("op", "mode"), ("worker", .string(worker)), ("mode", .string(mode))]
    case .schedules: members.append(("op", "schedules"))
    case .fleet: members.append(("op", "fleet"))
    case .schedule(let command, let name): members += [("op", .string(command.rawValue)), ("schedule", .string(name))]
    case .wait(let job, let timeoutMs):
        members += [("op", "wait"), ("job", .string(job)), ("timeout_ms", timeoutMs.map { .integer($0) } ?? .null)]
    case .jobs(let q):
        members.append(("op", "jobs"))
        members += filters(q)
        members.append(("cursor", q.cursor.map { .string($0) } ?? .null))
        if q.fleet { members.append(("fleet", true)) }
    case .retry(let which), .discard(let which):
        if case .retry = request.operation { members.append(("op", "retry")) } else { members.append(("op", "discard")) }
        switch which {
        case .job(let job): members.append(("job", .string(job)))
        case .matching(let q): members += filters(q)
        }
    case .submit(let s):
        members += [("op", "submit"), ("action", .string(s.action)), ("args", .array(s.args.map { .string($0) }))]
        switch s.placement {
        case .any: members.append(("worker", "any"))
        case .worker(let w): members.append(("worker", .string(w)))
        case .key(let k): members.append(("key", .string(k)))
        }
        members += [("wait", .bool(s.wait)), ("durable", .bool(s.durable)), ("delay_ms", .integer(s.delayMs))]
        members.append(("timeout_ms", s.timeoutMs.map { .integer($0) } ?? .null))
        members.append(("mode", s.mode.map { .string($0) } ?? .null))
        members += [("priority", .integer(Int64(s.priority))), ("retries", .integer(Int64(s.retries))),
                    ("retry_backoff_ms", .integer(s.retryBackoffMs))]
        if let ms = s.expiresInMs { members.append(("expires_in_ms", .integer(ms))) }
        if let key = s.uniqueKey { members.append(("unique_key", .string(key))) }
        if let fleet = s.fleet { members.append(("fleet", .bool(fleet))) }
        if let node = s.node { members.append(("node", .string(node))) }
    }
    return JSON.object(members).serialized()
}

#if !LOOPD_LIBFUZZER
/// Without libFuzzer: replays the files named on the command line.
@main enum Replay {
    static func main() { replayCorpusFiles(target: "FuzzRequestDecoder", fuzz) }
}
#endif
