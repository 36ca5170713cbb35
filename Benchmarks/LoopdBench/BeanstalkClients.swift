// beanstalkd's side of `--versus-beanstalkd`: the same workloads as loopd's
// scenarios, driven the same way (one client: a blocking read per reply;
// many: one thread polling every connection, as Multiplexed.swift drives loopd).
import LoopPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Runs `scenario` against beanstalkd: `scenario.clients` connections, each
/// with one job in progress at a time, for `scenario.seconds` after
/// `scenario.warmup` jobs each. A job is a `put` (`scenario.waited` false:
/// submit1, submit50), or its whole cycle (`put`, `reserve-with-timeout 0`,
/// `delete` of the job reserved, which with many clients may be another
/// client's: the queue is one tube). `window` counts beanstalkd's switches
/// and wake-ups over the measured run.
func runBeanstalk(_ scenario: Scenario, on beanstalk: BeanstalkReference,
                  window: WakeWindow) throws(BenchError) -> Measurement {
    var clients: [BeanstalkClient] = []
    for _ in 0..<scenario.clients {
        clients.append(try BeanstalkClient(path: beanstalk.socketPath, cycle: scenario.waited))
    }
    if scenario.warmup > 0 {
        _ = try drive(clients, seconds: 30, limitPerClient: scenario.warmup)
    }
    return try measureRun(window: window, serverCPU: { Processes.cpuSeconds(beanstalk.pid) ?? 0 }) {
        () throws(BenchError) in
        try drive(clients, seconds: scenario.seconds, limitPerClient: Int.max)
    }
}

/// Starts a job on every client, and on each again as soon as its last one
/// ended, for `seconds` (or until `limitPerClient` jobs each); then waits
/// for the jobs in progress. One client blocks in its read, as loopd's
/// 1-client driver does; many are read when `poll` says they are readable.
private func drive(_ clients: [BeanstalkClient], seconds: Double,
                   limitPerClient: Int) throws(BenchError) -> DriverRun {
    var latencies: [UInt64] = []
    latencies.reserveCapacity(min(limitPerClient, Int(seconds * 100_000 / Double(clients.count)) + 1024) * clients.count)
    var started = clients.map { _ in 0 }
    var replies = PollSet(clients.map(\.fd), interest: .readable)
    let polled = clients.count > 1
    let start = monotonicNanoseconds()
    let stopAt = start + UInt64(seconds * 1e9)
    var now = start
    var inProgress = 0

    func next(_ k: Int) throws(BenchError) {
        guard now < stopAt, started[k] < limitPerClient else { return }
        try clients[k].put(at: now)
        started[k] += 1
        inProgress += 1
    }

    for k in clients.indices { try next(k) }
    while inProgress > 0 {
        if polled { try replies.waitForReplies() }
        for k in clients.indices where !polled || replies.isReady(k) {
            guard let ended = try clients[k].receive() else { continue }
            now = monotonicNanoseconds()
            latencies.append(now &- ended)
            inProgress -= 1
            try next(k)
        }
    }
    return (latencies.count, start, now, latencies)
}

/// One beanstalkd connection with at most one job in progress, moved on by
/// its replies: each expected reply line sends the job's next command. It
/// reads what has arrived and never waits for a whole reply, so that one
/// thread can drive many connections; for one, its blocking read is the wait.
private final class BeanstalkClient {
    let fd: Int32
    /// Whole cycles (put, reserve, delete) instead of puts alone.
    private let cycle: Bool
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
    private var start = 0, end = 0
    /// The reply line the job in progress waits for next.
    private var awaiting = Awaiting.nothing
    /// When the job in progress was put (ns).
    private var putAt: UInt64 = 0
    /// `delete <id>\r\n` for the job reserved, rebuilt in place.
    private var deleteRequest: [UInt8] = []

    private enum Awaiting { case nothing, inserted, reserved, body, deleted }

    init(path: String, cycle: Bool) throws(BenchError) {
        fd = try ClientSocket.connect(path: path, ioTimeoutSeconds: 10)
        self.cycle = cycle
        deleteRequest.reserveCapacity(32)
    }

    deinit {
        ClientSocket.close(fd)
        buffer.deallocate()
    }

    /// Starts a job at `now`: `put 0 0 60 1` with one byte of body.
    func put(at now: UInt64) throws(BenchError) {
        precondition(awaiting == .nothing, "a beanstalkd client started a job with one in progress")
        try ClientSocket.writeAll(fd, Self.putRequest)
        putAt = now
        awaiting = .inserted
    }

    /// One read, then every complete reply line handled; when the job in
    /// progress has ended, the instant it was put, else nil.
    func receive() throws(BenchError) -> UInt64? {
        if end == buffer.count {
            // Replies are short and one command is in flight: only a peer
            // speaking another protocol fills 4 KiB without a newline.
            guard start > 0 else { throw BenchError("a beanstalkd reply line longer than \(buffer.count) bytes") }
            memmove(buffer.baseAddress!, buffer.baseAddress! + start, end - start)
            end -= start
            start = 0
        }
        let n = try ClientSocket.read(fd, buffer.baseAddress! + end, buffer.count - end)
        guard n > 0 else { throw BenchError("beanstalkd closed the connection") }
        end += n
        let bytes = UnsafeBufferPointer(buffer.bindMemory(to: UInt8.self))
        var ended: UInt64?
        var k = start
        while k < end {
            if bytes[k] == 0x0A {
                if try handle(bytes[start...k]) { ended = putAt }
                start = k + 1
            }
            k += 1
        }
        if start == end {
            start = 0
            end = 0
        }
        return ended
    }

    /// Checks one reply line (with its CRLF) against the one awaited and
    /// sends the job's next command; true when the job has ended.
    private func handle(_ line: Slice<UnsafeBufferPointer<UInt8>>) throws(BenchError) -> Bool {
        switch awaiting {
        case .inserted:
            try expect(line, Self.inserted)
            guard cycle else { break }
            try ClientSocket.writeAll(fd, Self.reserveRequest)
            awaiting = .reserved
            return false
        case .reserved:
            try expect(line, Self.reserved)
            // RESERVED <id> <bytes>: the body's line follows.
            let id = line.dropFirst(Self.reserved.count).prefix { $0 != UInt8(ascii: " ") }
            deleteRequest.removeAll(keepingCapacity: true)
            deleteRequest += Self.deletePrefix
            deleteRequest += id
            deleteRequest += [0x0D, 0x0A]
            awaiting = .body
            return false
        case .body:
            try ClientSocket.writeAll(fd, deleteRequest)
            awaiting = .deleted
            return false
        case .deleted:
            try expect(line, Self.deleted)
        case .nothing:
            throw BenchError("beanstalkd replied \(Self.text(line)) to no command")
        }
        awaiting = .nothing
        return true
    }

    /// Throws unless `line` starts with `prefix`.
    private func expect(_ line: Slice<UnsafeBufferPointer<UInt8>>, _ prefix: [UInt8]) throws(BenchError) {
        guard line.starts(with: prefix) else {
            throw BenchError("beanstalkd replied \(Self.text(line)) (expected \(String(decoding: prefix, as: UTF8.self))…)")
        }
    }

    private static func text(_ line: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        String(decoding: line.prefix(200), as: UTF8.self).filter { $0 != "\r\n" && $0 != "\n" }
    }

    private static let putRequest = Array("put 0 0 60 1\r\nx\r\n".utf8)
    private static let reserveRequest = Array("reserve-with-timeout 0\r\n".utf8)
    private static let deletePrefix = Array("delete ".utf8)
    private static let inserted = Array("INSERTED ".utf8)
    private static let reserved = Array("RESERVED ".utf8)
    private static let deleted = Array("DELETED".utf8)
}
