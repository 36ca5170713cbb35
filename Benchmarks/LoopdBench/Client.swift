/// One blocking connection to loopd, used by one thread. Requests are built
/// into a reusable byte buffer; replies are checked cheaply: each line must
/// start `{"id":N,"ok":true` (loopd always writes `id` then `ok` first), and
/// the caller checks that N is a request it has in flight.
final class Connection {
    let fd: Int32
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    /// Requests waiting for `flush()`.
    private var pending: [UInt8] = []

    static let bufferSize = 1 << 18

    init(path: String, ioTimeoutSeconds: Int = 10) throws(BenchError) {
        fd = try ClientSocket.connect(path: path, ioTimeoutSeconds: ioTimeoutSeconds)
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
        pending.reserveCapacity(1 << 16)
    }

    deinit {
        ClientSocket.close(fd)
        buffer.deallocate()
    }

    // MARK: Requests

    /// Queues `{"id":<id><suffix>` (the suffix carries the rest and the newline).
    @inline(__always)
    func enqueue(id: Int64, suffix: [UInt8]) {
        pending.append(contentsOf: Request.idPrefix)
        appendDecimal(id)
        pending.append(contentsOf: suffix)
    }

    /// Writes everything queued, in one write when it fits the socket buffer.
    func flush() throws(BenchError) {
        guard !pending.isEmpty else { return }
        try ClientSocket.writeAll(fd, pending)
        pending.removeAll(keepingCapacity: true)
    }

    private func appendDecimal(_ value: Int64) {
        var v = value
        if v < 0 {
            pending.append(UInt8(ascii: "-"))
            v = -v
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(truncatingIfNeeded: v % 10) + 0x30
                n += 1
                v /= 10
            } while v > 0
            while n > 0 {
                n -= 1
                pending.append(d[n])
            }
        }
    }

    // MARK: Replies

    /// Blocks until at least one complete reply line has arrived, then calls
    /// `onReply` with the id of every complete line buffered. Any line that
    /// is not an `ok:true` reply with an integer id is an error.
    func receive(_ onReply: (Int64) throws(BenchError) -> Void) throws(BenchError) {
        var delivered = false
        while true {
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var lineStart = start
            var k = start
            while k < end {
                if base[k] == 0x0A {
                    let id = try Self.parseOK(base, lineStart, k)
                    try onReply(id)
                    delivered = true
                    lineStart = k + 1
                }
                k += 1
            }
            start = lineStart
            if start == end {
                start = 0
                end = 0
            }
            if delivered { return }
            try fill()
        }
    }

    /// One read of what has arrived (the socket is readable: it does not
    /// block), then `onReply` for every complete reply line buffered, which
    /// may be none. For a caller that waits for readiness itself (`poll`).
    func receiveAvailable(_ onReply: (Int64) throws(BenchError) -> Void) throws(BenchError) {
        try fill()
        let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var lineStart = start
        for k in start..<end where base[k] == 0x0A {
            try onReply(try Self.parseOK(base, lineStart, k))
            lineStart = k + 1
        }
        start = lineStart
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Reads one whole reply line of any shape (for control requests).
    func receiveLine() throws(BenchError) -> String {
        while true {
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for k in start..<end where base[k] == 0x0A {
                let line = String(decoding: UnsafeBufferPointer(start: base + start, count: k - start), as: UTF8.self)
                start = k + 1
                if start == end {
                    start = 0
                    end = 0
                }
                return line
            }
            try fill()
        }
    }

    /// Sends one control request and returns its reply line.
    func roundTrip(_ line: String) throws(BenchError) -> String {
        pending.append(contentsOf: Array(line.utf8))
        pending.append(0x0A)
        try flush()
        return try receiveLine()
    }

    /// Reads more bytes after `end`, compacting first when the tail is full.
    private func fill() throws(BenchError) {
        if end == buffer.count {
            guard start > 0 else { throw BenchError("a reply line longer than \(buffer.count) bytes") }
            let base = buffer.baseAddress!
            (base).copyMemory(from: base + start, byteCount: end - start)
            end -= start
            start = 0
        }
        let n = try ClientSocket.read(fd, buffer.baseAddress! + end, buffer.count - end)
        guard n > 0 else { throw BenchError("loopd closed the connection") }
        end += n
    }

    /// The id of `{"id":N,"ok":true…` in base[from..<to]; anything else throws.
    @inline(__always)
    private static func parseOK(_ base: UnsafePointer<UInt8>, _ from: Int, _ to: Int) throws(BenchError) -> Int64 {
        var k = from
        for byte in Request.idPrefix {
            guard k < to, base[k] == byte else { throw badReply(base, from, to) }
            k += 1
        }
        var negative = false
        if k < to, base[k] == UInt8(ascii: "-") {
            negative = true
            k += 1
        }
        var value: Int64 = 0
        var digits = 0
        while k < to, base[k] >= 0x30, base[k] <= 0x39, digits < 19 {
            value = value * 10 + Int64(base[k] - 0x30)
            digits += 1
            k += 1
        }
        guard digits > 0 else { throw badReply(base, from, to) }
        for byte in Request.okTrue {
            guard k < to, base[k] == byte else { throw badReply(base, from, to) }
            k += 1
        }
        return negative ? -value : value
    }

    private static func badReply(_ base: UnsafePointer<UInt8>, _ from: Int, _ to: Int) -> BenchError {
        let line = String(decoding: UnsafeBufferPointer(start: base + from, count: min(to - from, 400)), as: UTF8.self)
        return BenchError("unexpected reply: \(line)")
    }
}

/// The request lines of the benchmark, as bytes.
enum Request {
    static let idPrefix = Array(#"{"id":"#.utf8)
    static let okTrue = Array(#","ok":true"#.utf8)
    /// A `noop` the client waits for.
    static let noopWait = Array(#","op":"submit","action":"noop","worker":"any"}"#.utf8) + [0x0A]
    /// The exec action `true` (`/bin/true`, see `LoopdProcess`), waited for.
    static let execWait = Array(#","op":"submit","action":"true","worker":"any"}"#.utf8) + [0x0A]
    /// A `noop` acknowledged once queued (not waited for).
    static let noopAsync = Array(#","op":"submit","action":"noop","worker":"any","wait":false}"#.utf8) + [0x0A]
    /// A durable `noop` acknowledged once journaled (fsync'd), not waited for.
    static let durableAsync =
        Array(#","op":"submit","action":"noop","worker":"any","durable":true,"wait":false}"#.utf8) + [0x0A]
    /// `noop` submits acknowledged at once (not waited for), each with a
    /// priority from `RandomPriorities`, cycled.
    static let randomPriorities: [[UInt8]] = RandomPriorities.values.map {
        Array(#","op":"submit","action":"noop","worker":"any","wait":false,"priority":\#($0)}"#.utf8) + [0x0A]
    }
}

/// Tracks which ids are in flight on one connection: every reply must name
/// one of them, exactly once.
struct InFlight {
    /// Send instant per id - 1 (ids are 1, 2, …); 0 once answered.
    private var sentAt: [UInt64] = []
    private(set) var sent: Int64 = 0
    private(set) var answered: Int64 = 0

    init(expected: Int) { sentAt.reserveCapacity(expected) }

    var count: Int64 { sent - answered }

    /// Records a new request sent at `now`; returns its id.
    @inline(__always)
    mutating func next(at now: UInt64) -> Int64 {
        sent += 1
        sentAt.append(now)
        return sent
    }

    /// Checks a reply's id and returns its latency in ns.
    @inline(__always)
    mutating func answer(_ id: Int64, at now: UInt64) throws(BenchError) -> UInt64 {
        guard id >= 1, id <= sent else { throw BenchError("reply for id \(id), which was never sent (sent 1...\(sent))") }
        let t0 = sentAt[Int(id - 1)]
        guard t0 != 0 else { throw BenchError("a second reply for id \(id)") }
        sentAt[Int(id - 1)] = 0
        answered += 1
        return now &- t0
    }
}
