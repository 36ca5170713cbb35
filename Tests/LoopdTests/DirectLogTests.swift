import Glibc
import Logging
import LoopRuntime
import LoopdProtocol
import Testing
@testable import LoopdCore

/// loopd's records skip swift-log's metadata dictionary when the handler is
/// one of loopd's own (`DirectLogHandler`); what reaches stderr or the
/// journal must not change.
@Suite struct DirectLogTests {
    static let fields: [(LogField, String)] = [
        (.jobID, "m3k2x9a1-17"), (.worker, "w1"), (.action, "echo"), (.durationUsec, "42"),
        (.result, "completed"), (.clientUID, "1000"),
    ]

    /// The event swift-log hands a handler for the same record.
    static func event(_ level: Logger.Level, _ message: String, _ fields: [(LogField, String)], id: MessageID?) -> LogEvent {
        var metadata: Logger.Metadata = [:]
        for (k, v) in fields { metadata[k.rawValue] = .string(v) }
        if let id { metadata["MESSAGE_ID"] = .string(id.rawValue) }
        return LogEvent(level: level, message: "\(message)", metadata: metadata, source: "loopd",
                        file: "LoopdCore/JobScheduler+Ends.swift", function: "end(_:_:)", line: 7)
    }

    @Test func stderrLinesAreUnchanged() throws {
        let pipe = try #require(CapturePipe())
        let handler = StderrLogHandler(fileDescriptor: pipe.writeEnd)
        let log = DaemonLogger(Logger(label: "loopd") { _ in handler })
        for (level, id) in [(Logger.Level.info, MessageID.jobFinished), (.warning, .jobFailed)] {
            log(level, "job m3k2x9a1-17 (echo) completed on w1", Self.fields, id: id)
            let direct = pipe.drain()
            handler.log(event: Self.event(level, "job m3k2x9a1-17 (echo) completed on w1", Self.fields, id: id))
            let generic = pipe.drain()
            #expect(direct == generic)
            #expect(direct.hasPrefix("loopd \(level.rawValue): job m3k2x9a1-17 (echo) completed on w1 ACTION=echo CLIENT_UID=1000"))
        }
        // Below the handler's level nothing is written.
        log(.debug, "not shown", Self.fields)
        #expect(pipe.drain() == "")
    }

    /// The job-end record, formatted from its parts, is the line the
    /// generic path writes for its text and fields.
    @Test func jobEndLinesAreUnchanged() throws {
        let pipe = try #require(CapturePipe())
        let handler = StderrLogHandler(fileDescriptor: pipe.writeEnd)
        let log = DaemonLogger(Logger(label: "loopd") { _ in handler })
        let records = [
            JobEndRecord(jobID: "m3k2x9a1-17", worker: "w1", action: "noop", durationUsec: 0, state: .completed,
                         error: nil, clientUID: 0),
            JobEndRecord(jobID: "j-2", worker: "w2", action: "fail", durationUsec: 18_446_744_073_709_551_615, state: .failed,
                         error: ProtocolError(.jobFailed, "it failed"), clientUID: 4_294_967_295),
            JobEndRecord(jobID: "j-3", worker: "wörker", action: "sleep", durationUsec: 1234, state: .cancelled,
                         error: ProtocolError(.cancelled, "cancelled"), clientUID: 1000),
            JobEndRecord(jobID: "j-4", worker: "w1", action: "sleep", durationUsec: 5000, state: .timedOut,
                         error: ProtocolError(.timeout, "sleep timed out"), clientUID: 0),
            // Retries: a retried attempt, and the last one.
            JobEndRecord(jobID: "j-5", worker: "w1", action: "fail", durationUsec: 70, state: .failed,
                         error: ProtocolError(.jobFailed, "boom"), clientUID: 0, attempt: 2, retryInMs: 180),
            JobEndRecord(jobID: "j-5", worker: "w1", action: "fail", durationUsec: 90, state: .failed,
                         error: ProtocolError(.jobFailed, "boom"), clientUID: 0, attempt: 3),
            // Longer than the stack the line is made on first: written again, whole.
            JobEndRecord(jobID: "j-6", worker: "w1", action: "exec", durationUsec: 7, state: .failed,
                         error: ProtocolError(.jobFailed, String(repeating: "stderr: ü ", count: 80)), clientUID: 0),
        ] + JobState.allCases.map {
            // Every state without an error: its spelling in the text and as RESULT=, at its level.
            JobEndRecord(jobID: "j-7", worker: "w1", action: "noop", durationUsec: 1, state: $0, error: nil, clientUID: 0)
        }
        for r in records {
            log.jobEnded(r)
            let direct = pipe.drain()
            handler.log(event: Self.event(r.level, r.message, r.fields, id: r.messageID))
            #expect(direct == pipe.drain())
        }
        #expect(records[0].message == "job m3k2x9a1-17 (noop) completed on w1")
        #expect(records[1].message == "job j-2 (fail) failed: it failed" && records[1].level == .warning)
        #expect(records[2].result == "cancelled" && records[2].level == .info)
        // A timeout is a failure an operator is warned of, with its own state in the text.
        #expect(records[3].message == "job j-4 (sleep) timed_out: sleep timed out" && records[3].level == .warning)
        #expect(records[3].messageID == .jobFailed && records[3].result == "timeout")
        // Retries: every attempt's end has ATTEMPT=; a retried one says when the next comes.
        #expect(records[4].message == "job j-5 (fail) attempt 2 failed: boom; retrying in 180 ms")
        #expect(records[4].fields.contains { $0.0 == .attempt && $0.1 == "2" })
        #expect(records[5].message == "job j-5 (fail) failed: boom")
        #expect(records[5].fields.contains { $0.0 == .attempt && $0.1 == "3" })
        #expect(!records[0].fields.contains { $0.0 == .attempt })
    }

    /// A job-end line spells its level as swift-log does.
    @Test func everyLevelIsSpelledAsItsRawValue() {
        for level in Logger.Level.allCases { #expect("\(level.literal)" == level.rawValue) }
    }

    /// A logger whose stderr handler writes into a pipe the test reads and
    /// holds job ends until the current loop's batch ends, and a timer far
    /// off that keeps the loop's default mode alive while the test runs it
    /// briefly (the caller invalidates it).
    static func holdingLogger() throws -> (pipe: CapturePipe, log: DaemonLogger, loop: Loop, keepAlive: LoopTimer) {
        let pipe = try #require(CapturePipe())
        let handler = StderrLogHandler(fileDescriptor: pipe.writeEnd)
        var log = DaemonLogger(Logger(label: "loopd") { _ in handler })
        let loop = Loop.current
        log.holdJobEnds(until: loop)
        let keepAlive = LoopTimer(after: .seconds(60)) { _ in }
        loop.add(keepAlive, forMode: .default)
        return (pipe, log, loop, keepAlive)
    }

    /// The end of job `j-n`, a completed noop.
    static func record(_ n: Int) -> JobEndRecord {
        JobEndRecord(jobID: "j-\(n)", worker: "w1", action: "noop", durationUsec: 5, state: .completed, error: nil, clientUID: 0)
    }

    /// Held job-end lines are written once the loop has run its batch, and
    /// before any other record, so the order of lines never changes.
    @Test func heldJobEndsKeepTheirOrder() throws {
        let (pipe, log, loop, keepAlive) = try Self.holdingLogger()
        defer { keepAlive.invalidate() }
        log.jobEnded(Self.record(1))
        log.jobEnded(Self.record(2))
        #expect(pipe.drain() == "")
        loop.run(mode: .default, timeout: .milliseconds(20))
        let batch = pipe.drain().split(separator: "\n")
        #expect(batch.count == 2 && batch[0].contains("JOB_ID=j-1 ") && batch[1].contains("JOB_ID=j-2 "))
        log.jobEnded(Self.record(3))
        log(.notice, "after job 3")
        let lines = pipe.drain().split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("JOB_ID=j-3 ") && lines[1] == "loopd notice: after job 3")
        loop.run(mode: .default, timeout: .milliseconds(20))
        #expect(pipe.drain() == "")
    }

    /// A caller that arranges the flush (the scheduler taking a batch of
    /// job ends) queues no block: its held lines wait for its `flushHeld`,
    /// however many passes the loop runs, and then go out in order.
    @Test func heldJobEndsWithAnArrangedFlushWaitForIt() throws {
        let (pipe, log, loop, keepAlive) = try Self.holdingLogger()
        defer { keepAlive.invalidate() }
        log.jobEnded(Self.record(1), flushArranged: true)
        log.jobEnded(Self.record(2), flushArranged: true)
        loop.run(mode: .default, timeout: .milliseconds(20))
        #expect(pipe.drain() == "")
        log.flushHeld()
        let lines = pipe.drain().split(separator: "\n")
        #expect(lines.count == 2 && lines[0].contains("JOB_ID=j-1 ") && lines[1].contains("JOB_ID=j-2 "))
    }

    @Test func journalEntriesAreUnchanged() {
        let handler = JournalLogHandler(identifier: "loopd")
        for id in [MessageID.jobFinished, nil] {
            let entry = handler.entry(level: .info, message: "job x done", fields: Self.fields, id: id,
                                      file: "LoopdCore/JobScheduler+Ends.swift", function: "end(_:_:)", line: 7)
            let direct = entry.fields
            let generic = handler.fields(of: Self.event(.info, "job x done", Self.fields, id: id))
            #expect(direct.sorted() == generic.sorted())
        }
    }

    /// What reaches journald is what the entry holds: every iovec points
    /// into memory alive for the whole call (under AddressSanitizer, a
    /// pointer that outlived its buffer is a reported use after free).
    @Test func journalEntriesReachTheSenderWhole() {
        let fields = ["MESSAGE=job x done", "PRIORITY=6", "JOB_ID=m3k2x9a1-17", "RESULT=" + String(repeating: "r", count: 5000)]
        var sent: [String] = []
        let sendv: JournalEntry.Send = { iov, count in
            sent = UnsafeBufferPointer(start: iov, count: Int(count)).map { v in
                String(decoding: UnsafeRawBufferPointer(start: v.iov_base, count: v.iov_len), as: UTF8.self)
            }
            return 0
        }
        JournalLogHandler.send(fields, through: sendv)
        #expect(sent == fields)
        let handler = JournalLogHandler(identifier: "loopd")
        let entry = handler.entry(level: .warning, message: "job y failed", fields: Self.fields, id: .jobFailed,
                                  file: "F", function: "f()", line: 1)
        entry.send(through: sendv)
        #expect(sent == entry.fields && entry.fields.contains("MESSAGE=job y failed"))
    }

    @Test func handlersWithMetadataGoThroughSwiftLog() throws {
        let pipe = try #require(CapturePipe())
        var handler = StderrLogHandler(fileDescriptor: pipe.writeEnd)
        handler.metadata["HOST"] = "a"
        let log = DaemonLogger(Logger(label: "loopd") { _ in handler })
        log(.info, "hello", [(.worker, "w1")])
        #expect(pipe.drain() == "loopd info: hello HOST=a WORKER=w1\n")
    }
}

/// A pipe a handler writes into and a test reads back from.
final class CapturePipe {
    let readEnd: Int32
    let writeEnd: Int32

    init?() {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// What the pipe received so far.
    func drain() -> String {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            out += chunk[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
