/// The journal's on-disk format. All integers are little-endian.
///
/// ```
/// file   := header record*
/// header := "LOOPDJNL" (8 bytes) · version u32 (= 1) · crc32c(first 12 bytes) u32      16 bytes
/// record := length u32 · crc u32 · type u8 · payload (length bytes)                9 + length bytes
///           crc = crc32c(length field · type · payload), i.e. every byte but its own
/// type 1 "submitted" payload := str id · str action · u32 argc · str×argc · str placement
///                               · i64 delayMs · opt-i64 timeoutMs · opt-str mode
///                               · i64 submittedAt · u32 clientUID
///                               [· u32 clientGID · u32 groupCount · u32×groupCount
///                                [· u32 priority · opt-i64 expiresInMs
///                                 [· u32 retries · i64 retryBackoffMs · opt-str uniqueKey
///                                  · u32 attemptsDone · attempts
///                                   [· opt-str retryOf]]]]
/// type 2 "finished"  payload := str id · str state · str resultJSON · i64 finishedAt
///                               [· u32 clientUID
///                                [· i64 submittedAt · opt-i64 startedAt · str worker · str action
///                                 · opt-str errorCode · opt-str errorMessage
///                                 [· u32 attempt · attempts · opt-str uniqueKey
///                                  [· opt-(u32 length · submitted payload) request
///                                   · opt-str retryOf · opt-str retriedAs]]]]
/// type 3 "discarded" payload := str id
/// attempts := u32 count (≤ 8) · (u32 attempt · str code · str message · i64 endedAt)×count
/// str := u32 byte count · UTF-8 bytes          opt-X := u8 0 | u8 1 · X
/// ```
///
/// The bracketed tails were added after the first release; a record without
/// one (written by an older loopd) still reads, with those fields unknown.
/// The `retry` tails and the discarded record (after 0.2.0) are written only for
/// a durable failure, a retry's links and a discard: a journal of other
/// jobs stays readable by earlier releases.
/// The scheduling tails (0.2.0) are written only for a job with a priority
/// other than the default, an expiry, `retries` or a `unique_key`, so a
/// journal of jobs without them stays readable by 0.1.0.
/// A submitted record is appended again, with `attemptsDone` raised, each
/// time an attempt of a durable job fails and it will retry (the later
/// record wins); a submitted record whose job has no gid but needs a later
/// tail writes gid 0xFFFFFFFF, which reads back as unknown.
///
/// The checksum covers the length, so a flipped length bit cannot make the
/// reader skip to a wrong boundary unnoticed; it covers the type, so a record
/// cannot change meaning. A binary payload (instead of JSON) keeps encoding
/// off the hot path and needs no Foundation.
enum JournalRecord: Equatable {
    case submitted(DurableJob)
    case finished(FinishedJob)
    /// An ended job forgotten before its retention ended (`discard`).
    case discarded(id: String)

    /// The gid written for "unknown" when a later tail follows: (gid_t)-1,
    /// which the kernel uses for "no id" and the config never accepts.
    static let unknownGID = UInt32.max

    /// Bytes before the payload: length, crc, type.
    static let headerBytes = 9
    /// The type byte of a submitted and of a finished record.
    static let submittedType: UInt8 = 1
    static let finishedType: UInt8 = 2
    static let discardedType: UInt8 = 3
    /// Largest payload accepted: far above any request line loopd accepts,
    /// and small enough that a garbage length is recognised as garbage.
    static let maxPayloadBytes = 64 << 20

    /// The file header, written once when the file is created.
    static let fileHeader: [UInt8] = {
        var writer = ByteWriter()
        writer.bytes += Array("LOOPDJNL".utf8)
        writer.u32(1)
        writer.u32(CRC32C.checksum(writer.bytes[...]))
        return writer.bytes
    }()

    /// The job id the record is about.
    var id: String {
        switch self {
        case let .submitted(job): return job.id
        case let .finished(job): return job.id
        case let .discarded(id): return id
        }
    }

    /// Appends this record, framed and checksummed, to `out`; returns its
    /// size in bytes.
    @discardableResult
    func encode(into out: inout [UInt8]) throws(JournalError) -> Int {
        let start = out.count
        var writer = ByteWriter()
        swap(&writer.bytes, &out)  // hand the storage to the writer without a copy
        writer.u32(0)  // length, patched below
        writer.u32(0)  // crc, patched below
        switch self {
        case let .submitted(job):
            writer.bytes.append(Self.submittedType)
            writer.submitted(job)
        case let .discarded(id):
            writer.bytes.append(Self.discardedType)
            writer.string(id)
        case let .finished(job):
            writer.bytes.append(Self.finishedType)
            writer.string(job.id)
            writer.string(job.state)
            writer.string(job.resultJSON)
            writer.i64(job.finishedAt)
            if let uid = job.clientUID {
                writer.u32(uid)
                if let d = job.details {
                    writer.i64(d.submittedAt)
                    writer.optional(d.startedAt) { $0.i64($1) }
                    writer.string(d.worker)
                    writer.string(d.action)
                    writer.optional(d.errorCode) { $0.string($1) }
                    writer.optional(d.errorMessage) { $0.string($1) }
                    if d.hasRetryTail {
                        writer.u32(UInt32(d.attempt))
                        writer.attempts(d.attemptErrors)
                        writer.optional(d.uniqueKey) { $0.string($1) }
                        if let links = d.links {
                            writer.optional(links.request) { w, request in
                                var inner = ByteWriter()
                                inner.submitted(request)
                                w.u32(UInt32(inner.bytes.count))
                                w.bytes += inner.bytes
                            }
                            writer.optional(links.retryOf) { $0.string($1) }
                            writer.optional(links.retriedAs) { $0.string($1) }
                        }
                    }
                }
            }
        }
        swap(&writer.bytes, &out)
        let length = out.count - start - Self.headerBytes
        guard length <= Self.maxPayloadBytes else {
            out.removeLast(out.count - start)
            throw .recordTooLarge(id: id, bytes: length)
        }
        ByteWriter.patch(&out, at: start, UInt32(length))
        var crc = CRC32C.checksum(out[start..<start + 4])
        crc = CRC32C.checksum(out[(start + 8)...], continuing: crc)
        ByteWriter.patch(&out, at: start + 4, crc)
        return out.count - start
    }

    /// Decodes a record whose type byte and payload passed the checksum;
    /// nil when they still do not parse (an unknown type from a newer
    /// version, or a bug), which recovery treats like a bad checksum.
    static func decode(type: UInt8, payload: ArraySlice<UInt8>) -> JournalRecord? {
        var reader = ByteReader(bytes: payload)
        switch type {
        case Self.submittedType:
            guard let job = reader.submitted(), reader.isAtEnd else { return nil }
            return .submitted(job)
        case Self.discardedType:
            guard let id = reader.string(), reader.isAtEnd else { return nil }
            return .discarded(id: id)
        case Self.finishedType:
            guard let id = reader.string(), let state = reader.string(), let result = reader.string(),
                  let finishedAt = reader.i64() else { return nil }
            var uid: UInt32?
            var details: FinishedJob.Details?
            if !reader.isAtEnd {
                guard let u = reader.u32() else { return nil }
                uid = u
            }
            if !reader.isAtEnd {
                guard let submittedAt = reader.i64(), let startedAt = reader.optional({ $0.i64() }),
                      let worker = reader.string(), let action = reader.string(),
                      let code = reader.optional({ $0.string() }), let message = reader.optional({ $0.string() })
                else { return nil }
                details = FinishedJob.Details(submittedAt: submittedAt, startedAt: startedAt, worker: worker,
                                              action: action, errorCode: code, errorMessage: message)
            }
            if !reader.isAtEnd {
                guard let attempt = reader.u32(), let errors = reader.attempts(),
                      let key = reader.optional({ $0.string() }) else { return nil }
                details?.attempt = Int(attempt)
                details?.attemptErrors = errors
                details?.uniqueKey = key
            }
            if !reader.isAtEnd {
                guard let request = reader.optional({ r -> DurableJob? in
                          guard let n = r.u32(), var inner = r.slice(Int(n)) else { return nil }
                          guard let job = inner.submitted(), inner.isAtEnd else { return nil }
                          return job
                      }),
                      let retryOf = reader.optional({ $0.string() }), let retriedAs = reader.optional({ $0.string() })
                else { return nil }
                details?.links = FinishedJob.Links(request: request, retryOf: retryOf, retriedAs: retriedAs)
            }
            guard reader.isAtEnd else { return nil }
            return .finished(FinishedJob(id: id, state: state, resultJSON: result, finishedAt: finishedAt,
                                         clientUID: uid, details: details))
        default:
            return nil
        }
    }
}

/// Little-endian serialisation into a byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func i64(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optional<T>(_ value: T?, _ body: (inout ByteWriter, T) -> Void) {
        guard let value else { return bytes.append(0) }
        bytes.append(1)
        body(&self, value)
    }

    /// Overwrites four bytes at `offset` with `value`.
    static func patch(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }
}

/// Little-endian deserialisation; every read returns nil instead of running
/// past the end, so a malformed payload can never trap.
struct ByteReader {
    let bytes: ArraySlice<UInt8>
    private var position: Int

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var isAtEnd: Bool { position == bytes.endIndex }
    /// Bytes not read yet.
    var remaining: Int { bytes.endIndex - position }


    mutating func u32() -> UInt32? {
        guard bytes.endIndex - position >= 4 else { return nil }
        defer { position += 4 }
        return Self.u32(bytes, at: position)
    }

    mutating func i64() -> Int64? {
        guard bytes.endIndex - position >= 8 else { return nil }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return Int64(bitPattern: value)
    }

    mutating func string() -> String? {
        guard let count = u32(), UInt64(count) <= UInt64(bytes.endIndex - position) else { return nil }
        defer { position += Int(count) }
        return String(decoding: bytes[position..<position + Int(count)], as: UTF8.self)
    }

    /// Reads an optional: `.some(nil)` for an absent value, nil when malformed.
    mutating func optional<T>(_ body: (inout ByteReader) -> T?) -> T?? {
        guard position < bytes.endIndex else { return nil }
        let flag = bytes[position]
        position += 1
        switch flag {
        case 0: return .some(nil)
        case 1: return body(&self).map { .some($0) }
        default: return nil
        }
    }

    /// The little-endian u32 at `offset` of `bytes` (caller checked bounds).
    static func u32(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        return value
    }
}

extension ByteWriter {
    /// A submitted record's payload (also a failure's `request`, inside its finished record).
    mutating func submitted(_ job: DurableJob) {
        string(job.id)
        string(job.action)
        u32(UInt32(job.args.count))
        for arg in job.args { string(arg) }
        string(job.placement)
        i64(job.delayMs)
        optional(job.timeoutMs) { $0.i64($1) }
        optional(job.mode) { $0.string($1) }
        i64(job.submittedAt)
        u32(job.clientUID)
        // The tails nest: each is written only when it or a later one
        // is needed, so a plain job's record is as older releases wrote it.
        guard job.clientGID != nil || job.hasSchedulingTail else { return }
        u32(job.clientGID ?? JournalRecord.unknownGID)
        u32(UInt32(job.clientGroups.count))
        for group in job.clientGroups { u32(group) }
        guard job.hasSchedulingTail else { return }
        u32(job.priority)
        optional(job.expiresInMs) { $0.i64($1) }
        guard job.hasRetryTail else { return }
        u32(UInt32(job.retries))
        i64(job.retryBackoffMs)
        optional(job.uniqueKey) { $0.string($1) }
        u32(UInt32(job.attemptsDone))
        attempts(job.attemptErrors)
        guard let retryOf = job.retryOf else { return }
        optional(retryOf) { $0.string($1) }
    }
}

extension ByteReader {
    /// The next `count` bytes as a reader of their own; nil past the end.
    mutating func slice(_ count: Int) -> ByteReader? {
        guard count >= 0, count <= remaining else { return nil }
        defer { position += count }
        return ByteReader(bytes: bytes[position..<position + count])
    }

    /// A submitted record's payload, up to the end of this reader.
    mutating func submitted() -> DurableJob? {
        guard let id = string(), let action = string(), let argc = u32(), argc <= UInt32(remaining) else { return nil }
        var args: [String] = []
        for _ in 0..<argc {
            guard let arg = string() else { return nil }
            args.append(arg)
        }
        guard let placement = string(), let delay = i64(), let timeout = optional({ $0.i64() }),
              let mode = optional({ $0.string() }), let submittedAt = i64(), let uid = u32() else { return nil }
        var gid: UInt32?
        var groups: [UInt32] = []
        if !isAtEnd {
            guard let g = u32(), let count = u32(), count <= UInt32(remaining / 4) else { return nil }
            for _ in 0..<count {
                guard let group = u32() else { return nil }
                groups.append(group)
            }
            gid = g == JournalRecord.unknownGID ? nil : g
        }
        var job = DurableJob(id: id, action: action, args: args, placement: placement, delayMs: delay,
                             timeoutMs: timeout, mode: mode, submittedAt: submittedAt, clientUID: uid,
                             clientGID: gid, clientGroups: groups)
        if !isAtEnd {
            guard let p = u32(), let e = optional({ $0.i64() }) else { return nil }
            job.priority = p
            job.expiresInMs = e
        }
        if !isAtEnd {
            guard let retries = u32(), let backoff = i64(), let key = optional({ $0.string() }),
                  let done = u32(), let errors = attempts() else { return nil }
            job.retries = Int(retries)
            job.retryBackoffMs = backoff
            job.uniqueKey = key
            job.attemptsDone = Int(done)
            job.attemptErrors = errors
        }
        if !isAtEnd {
            guard let retryOf = optional({ $0.string() }) else { return nil }
            job.retryOf = retryOf
        }
        return job
    }
}
