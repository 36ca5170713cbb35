import LoopPlatform
import LoopRuntime
#if canImport(Glibc)
import Glibc
#endif

/// What one round trip runs. Both clients send it with the extended
/// protocol, unnamed statement (Parse, Bind, Execute, Sync; postgres-nio
/// adds a Describe) and no parameters.
enum Statement: String, Sendable, Hashable {
    case select = "SELECT 1"
    case update = "UPDATE bench SET n = n + 1 WHERE id = 1"
}

/// The table (b) updates, with its one row; each client runs these first.
let setupStatements = [
    "CREATE TABLE IF NOT EXISTS bench (id integer PRIMARY KEY, n bigint NOT NULL)",
    "INSERT INTO bench VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
]

/// A benchmark case: a statement, and how many are queued at once.
struct Case: Sendable {
    var label: String
    var statement: Statement
    var depth: Int
}

/// How a statement ended, as the loop sees it: nil, or why it failed.
typealias Done = @Sendable (String?) -> Void

/// A PostgreSQL client as loopd would drive it from its main loop:
/// `issue` is called on the loop's thread, and `done` runs there too.
protocol Client: AnyObject, Sendable {
    var name: String { get }
    func issue(_ statement: Statement, _ done: @escaping Done)
    func close()
}

/// A failure that ends the run, with a message for people.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `loop` (the calling thread's) until `start`'s work calls `finish`,
/// or `seconds` pass.
final class LoopWait: @unchecked Sendable {
    private let loop: Loop
    private var failure: String?
    private var finished = false

    init(_ loop: Loop) { self.loop = loop }

    /// Loop thread only.
    func finish(_ failure: String? = nil) {
        guard !finished else { return }
        finished = true
        self.failure = failure
        loop.stop()
    }

    func run(seconds: Int, what: String, _ start: () -> Void) throws(BenchFailure) {
        // The timer also keeps the run from ending for want of sources while
        // postgres-nio's results are on their way.
        let watchdog = LoopTimer(after: .seconds(seconds)) { [self] _ in finish("\(what): nothing within \(seconds) s") }
        loop.add(watchdog, forMode: .common)
        defer { watchdog.invalidate() }
        start()
        while !finished { loop.run(mode: .default) }
        if let failure { throw BenchFailure(failure) }
    }
}

/// One measured run: `warmup` + `count` statements, `depth` of them issued
/// at once (each completion issues the next). Latency is from the issuing
/// call to the completion on the loop; CPU time and context switches are
/// getrusage's between the warm-up's last completion and the last one.
final class Runner: @unchecked Sendable {
    private let client: any Client
    private let statement: Statement
    private let depth: Int
    private let warmup: Int
    private let total: Int
    private let wait: LoopWait
    private var issued = 0
    private var completed = 0
    private var latencies: [Int64] = []
    private var startUsage = Usage.now()
    private var startedAt: UInt64 = 0
    private var result: RunResult?

    init(client: any Client, case c: Case, warmup: Int, count: Int, loop: Loop) {
        self.client = client
        statement = c.statement
        depth = max(c.depth, 1)
        self.warmup = warmup
        total = warmup + count
        wait = LoopWait(loop)
        latencies.reserveCapacity(count)
    }

    func run(timeoutSeconds: Int) throws(BenchFailure) -> RunResult {
        try wait.run(seconds: timeoutSeconds, what: client.name) {
            if warmup == 0 { markStart() }
            for _ in 0..<depth { issueNext() }
        }
        return result!
    }

    private func markStart() {
        startUsage = Usage.now()
        startedAt = monotonicNanoseconds()
    }

    private func issueNext() {
        guard issued < total else { return }
        let measured = issued >= warmup
        issued += 1
        let sentAt = monotonicNanoseconds()
        client.issue(statement) { [self] failure in
            let now = monotonicNanoseconds()
            if let failure {
                wait.finish("\(client.name): \(statement.rawValue): \(failure)")
                return
            }
            if measured { latencies.append(Int64(now - sentAt)) }
            completed += 1
            if completed == warmup { markStart() }
            if completed == total {
                finish(at: now)
            } else {
                issueNext()
            }
        }
    }

    private func finish(at now: UInt64) {
        let end = Usage.now()
        latencies.sort()
        result = RunResult(
            count: total - warmup,
            wallNanoseconds: Int64(now - startedAt),
            cpuNanoseconds: end.cpuNanoseconds - startUsage.cpuNanoseconds,
            switches: (end.voluntarySwitches - startUsage.voluntarySwitches)
                + (end.involuntarySwitches - startUsage.involuntarySwitches),
            sortedLatencies: latencies)
        wait.finish()
    }
}

/// Writes `text` and a newline to standard output at once (no stdio
/// buffer: progress shows through a pipe).
func emit(_ text: String = "") {
    var bytes = Array((text + "\n").utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return }
        bytes = bytes.dropFirst(n)
    }
}
