import Foundation
import Glibc
import LoopdProtocol
import Testing

/// A connection's share of a main-loop pass (`limits.max_requests_per_pass`):
/// one client pipelining a hundred thousand `workers`, `jobs` and
/// `metrics` requests neither stops the systemd watchdog's pings nor keeps
/// another client from being answered. Against the real binary, as a user
/// of its own, told by `NOTIFY_SOCKET` and `WATCHDOG_USEC` to ping a
/// socket this test reads, as systemd would.
@Suite(.serialized, .enabled(if: LoopdAsAnotherUser.isAvailable, LoopdAsAnotherUser.unavailableReason))
struct FairPassTests {
    /// The watchdog interval loopd is given: it pings every half of it.
    static let watchdogSeconds = 4.0

    @Test func aPipelinedFloodNeitherStarvesTheWatchdogNorAnotherClient() throws {
        let notify = try NotifyListener()
        defer { notify.stop() }
        let d = try LoopdAsAnotherUser(environment: [
            "NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": String(Int(Self.watchdogSeconds * 1_000_000)),
        ])
        defer { d.stop() }
        // Jobs the flood's requests would walk if they walked the table.
        let root = try d.client(as: .root)
        for i in 0..<2000 {
            root.send(#"{"id":\#(i),"op":"submit","action":"noop","worker":"w2","delay_ms":600000,"wait":false}"#)
        }
        for _ in 0..<2000 { _ = root.readLine() }

        let requests = 100_000
        var batch: [UInt8] = []
        for i in 0..<requests {
            let line = switch i % 100 {
            case 0: #"{"id":\#(i),"op":"metrics"}"#
            case let r where r % 2 == 0: #"{"id":\#(i),"op":"workers"}"#
            default: #"{"id":\#(i),"op":"jobs","state":"queued","limit":1}"#
            }
            batch += Array((line + "\n").utf8)
        }
        let flooder = Shared(try d.client(as: .nobody), batch), other = try d.client(as: .bin)
        let received = Counter()
        let reader = Thread {
            // Counted, not parsed: a string per reply would cost minutes of the
            // cooperative pool under ThreadSanitizer, which other suites need.
            flooder.client.skipLines(requests) { received.add($0) }
            received.finish()
        }
        let floodStart = notify.count
        reader.start()
        let writer = Thread { flooder.client.send(raw: flooder.batch) }
        writer.start()

        // The other client is answered while the flood is still coming in.
        var answeredDuringFlood = 0
        while !received.isFinished {
            guard other.call(#"{"id":"p","op":"ping"}"#)?.ok == true else { break }
            if !received.isFinished { answeredDuringFlood += 1 }
        }
        #expect(waitUntil(120) { received.isFinished })
        #expect(received.value == requests, "the flood got \(received.value) of \(requests) replies")
        #expect(answeredDuringFlood > 0, "no ping of another client was answered during the flood")
        // One more ping interval, so the watchdog's view covers the flood's end.
        #expect(waitUntil(30) { notify.count > floodStart + 1 })
        let gaps = notify.gaps(from: floodStart)
        #expect(!gaps.isEmpty)
        #expect(gaps.allSatisfy { $0 < Self.watchdogSeconds },
                "a gap between watchdog pings reached the watchdog interval (systemd would restart loopd): \(gaps)")
    }
}

/// The framer's side of the share: it hands over a bounded number of lines.
@Suite struct FramerShareTests {
    /// The framer hands over at most the share asked for and keeps the
    /// rest, whole lines in order, for the next drain.
    @Test func theFramerHandsOverABoundedShareAndKeepsTheRest() {
        var framer = LineFramer(maxLineBytes: 64)
        let text = (0..<10).map { "line \($0)\n" }.joined() + "partial"
        Array(text.utf8).withUnsafeBytes { framer.feed($0) }
        var lines: [String] = []
        var outcomes: [LineFramer.Drained] = []
        for _ in 0..<4 {
            outcomes.append(framer.drain(maxLines: 4) { lines.append(String(decoding: $0, as: UTF8.self)) })
        }
        #expect(lines == (0..<10).map { "line \($0)" })
        #expect(outcomes == [.more, .more, .done, .done])
        #expect(framer.pendingBytes == "partial".utf8.count)
        Array("!\n".utf8).withUnsafeBytes { framer.feed($0) }
        let last = framer.drain(maxLines: 4) { lines.append(String(decoding: $0, as: UTF8.self)) }
        #expect(last == .done)
        #expect(lines.last == "partial!")
    }
}

/// The flooding client, shared by the thread that writes its requests
/// (which only sends on the descriptor) and the one that reads its replies
/// (which alone touches the client's read buffer).
private final class Shared: @unchecked Sendable {
    let client: TestClient
    let batch: [UInt8]

    init(_ client: TestClient, _ batch: [UInt8]) {
        self.client = client
        self.batch = batch
    }
}

/// A count one thread adds to and another reads.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()  // guards both fields
    private var count = 0
    private var finished = false

    var value: Int { lock.withLock { count } }
    var isFinished: Bool { lock.withLock { finished } }
    func add(_ n: Int) { lock.withLock { count += n } }
    func finish() { lock.withLock { finished = true } }
}

/// A datagram socket standing in for systemd's notification socket: it
/// records when each `WATCHDOG=1` came.
private final class NotifyListener: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let lock = NSLock()  // guards `pings` and `stopped`
    private var pings: [Date] = []
    private var stopped = false
    private var thread: Thread?

    init() throws {
        let directory = makeTempDirectory()
        chmod(directory, 0o755)
        path = directory + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let r = withUnixAddress(path) { bind(fd, $0, $1) }
        guard r == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        chmod(path, 0o666)  // loopd runs as another user
        var tv = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let t = Thread { [self] in receive() }
        thread = t
        t.start()
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !lock.withLock({ stopped }) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { continue }
            let message = String(decoding: buffer[0..<n], as: UTF8.self)
            if message.split(separator: "\n").contains("WATCHDOG=1") { lock.withLock { pings.append(Date()) } }
        }
    }

    /// Pings received so far.
    var count: Int { lock.withLock { pings.count } }

    /// The seconds between consecutive pings from the `from`th on.
    func gaps(from: Int) -> [Double] {
        let p = lock.withLock { pings }
        guard p.count > from + 1 else { return [] }
        return (max(from, 1)..<p.count).map { p[$0].timeIntervalSince(p[$0 - 1]) }
    }

    func stop() {
        lock.withLock { stopped = true }
        while thread?.isFinished == false { usleep(10_000) }
        thread = nil  // its closure holds this listener: the cycle ends here
        close(fd)
        unlink(path)
    }
}
