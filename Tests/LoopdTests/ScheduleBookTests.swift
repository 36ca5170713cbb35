import Foundation
import Logging
@testable import LoopdCore
import LoopdProtocol
import Prometheus
import Testing

/// Schedules with an injected wall clock: the grid, R13's catch-up and the
/// other policies, overlap, jitter, pause, trigger, and what survives a
/// restart or a reload (docs/OPERATIONS.md, "Schedules").
@Suite struct ScheduleBookTests {
    /// Records the runs a book submits; jobs' states are set by the test.
    final class Runner: ScheduleRunner {
        var runs: [(schedule: String, slot: Int64?)] = []
        var states: [String: JobState] = [:]
        var cancelled: [String] = []
        var refusal: ProtocolError?

        func submitRun(of schedule: DaemonConfig.Schedule, slot: Int64?) -> Result<String, ProtocolError> {
            if let refusal { return .failure(refusal) }
            runs.append((schedule.name, slot))
            let id = "job\(runs.count)"
            states[id] = .queued
            return .success(id)
        }

        func state(ofJob id: String) -> JobState? { states[id] }
        func cancelRun(_ id: String) { cancelled.append(id) }
        var slots: [Int64?] { runs.map(\.slot) }
    }

    /// A book over `schedules` at `now`, its state in `directory` (none: not kept).
    final class Book {
        var now: Int64
        let runner = Runner()
        let book: ScheduleBook

        init(_ schedules: [DaemonConfig.Schedule], at now: Int64, directory: String? = nil, hostKey: String = "host",
             log: DaemonLogger = .silent) {
            self.now = now
            book = ScheduleBook(log: log, registry: ScheduleMetrics.Registry(registry: PrometheusCollectorRegistry()),
                                stateFile: directory.map { ScheduleStateFile(directory: $0, fsync: false) }, hostKey: hostKey)
            book.now = { [unowned self] in self.now }
            book.runner = runner
            book.start(Dictionary(uniqueKeysWithValues: schedules.map { ($0.name, $0) }), on: nil)
        }

        /// Moves the clock to `t` and lets the book look.
        func run(at t: Int64) {
            now = t
            book.runDue()
        }

        var entry: ScheduleBook.Entry { book.entries.values.first! }
    }

    static let minute: Int64 = 60_000
    /// 2026-11-26T12:00:00Z.
    static let noon: Int64 = 1_795_694_400_000

    static func every(_ ms: Int64, name: String = "s", _ edit: (inout DaemonConfig.Schedule) -> Void = { _ in })
        -> DaemonConfig.Schedule {
        var s = DaemonConfig.Schedule(name: name, job: SubmitRequest(action: "noop", wait: false), when: .every(milliseconds: ms))
        edit(&s)
        return s
    }

    // MARK: the grid

    @Test("every: slots are multiples of the interval since the epoch; a slot runs when it is due, not before")
    func everyKeepsTheEpochGrid() {
        let b = Book([Self.every(5 * Self.minute)], at: Self.noon + 3 * Self.minute + 10_000)
        #expect(b.entry.nextSlot == Self.noon + 5 * Self.minute)
        b.run(at: Self.noon + 5 * Self.minute - 1)
        #expect(b.runner.runs.isEmpty, "ran before its slot")
        b.run(at: Self.noon + 5 * Self.minute + 40)
        #expect(b.runner.slots == [Self.noon + 5 * Self.minute])
        #expect(b.entry.nextSlot == Self.noon + 10 * Self.minute)
    }

    @Test("each run is a journal record: SCHEDULE=, SLOT=, JOB_ID= and the schedule's MESSAGE_ID")
    func eachRunIsARecord() {
        let captured = CapturedLog()
        let b = Book([Self.every(Self.minute)], at: Self.noon + 1,
                     log: DaemonLogger(Logger(label: "test") { _ in captured }))
        b.run(at: Self.noon + Self.minute)
        let record = captured.records.first { $0.metadata["MESSAGE_ID"] == .string(MessageID.scheduleFired.rawValue) }
        #expect(record?.metadata["SCHEDULE"] == "s")
        #expect(record?.metadata["SLOT"] == .string(Timestamp.format(unixMilliseconds: Self.noon + Self.minute)))
        #expect(record?.metadata["JOB_ID"] == "job1")
    }

    // MARK: missed slots (R13 and the other policies)

    @Test("catch_up = one (R13): five missed slots give one run, for the latest, then the grid goes on")
    func catchUpOneRunsOnceForAllMissedSlots() {
        let b = Book([Self.every(Self.minute)], at: Self.noon + 1)
        b.run(at: Self.noon + 5 * Self.minute + 30_000)
        #expect(b.runner.slots == [Self.noon + 5 * Self.minute])
        #expect(b.entry.nextSlot == Self.noon + 6 * Self.minute)
        #expect(b.entry.metrics.skips == 4, "the four slots folded into the run are counted as missed")
    }

    @Test("catch_up = all: a run per missed slot, oldest first, the latest catch_up_limit of them")
    func catchUpAllRunsEachMissedSlotUpToTheLimit() {
        let b = Book([Self.every(Self.minute) { $0.catchUp = .all }], at: Self.noon + 1)
        b.run(at: Self.noon + 5 * Self.minute + 30_000)
        #expect(b.runner.slots == (1...5).map { Self.noon + $0 * Self.minute })

        let limited = Book([Self.every(Self.minute) { $0.catchUp = .all; $0.catchUpLimit = 3 }], at: Self.noon + 1)
        limited.run(at: Self.noon + 5 * Self.minute + 30_000)
        #expect(limited.runner.slots == (3...5).map { Self.noon + $0 * Self.minute })
        #expect(limited.entry.metrics.skips == 2)
    }

    @Test("catch_up = none: a late slot does not run; the next one on time does")
    func catchUpNoneRunsOnlySlotsOnTime() {
        let b = Book([Self.every(Self.minute) { $0.catchUp = .none }], at: Self.noon + 1)
        b.run(at: Self.noon + 5 * Self.minute + 40_000)  // 40 s late: past halfway to the next slot
        #expect(b.runner.runs.isEmpty)
        #expect(b.entry.nextSlot == Self.noon + 6 * Self.minute)
        b.run(at: Self.noon + 6 * Self.minute + 200)
        #expect(b.runner.slots == [Self.noon + 6 * Self.minute])
    }

    @Test("a cron schedule catches up as an interval does (R13), counting its slots")
    func cronCatchUpCountsItsSlots() throws {
        var s = Self.every(Self.minute) { $0.catchUp = .all }
        s.when = .cron(try CronExpression(parsing: "*/15 * * * *"), zone: .utc)
        let b = Book([s], at: Self.noon + 1)
        b.run(at: Self.noon + 61 * Self.minute)
        #expect(b.runner.slots == [15, 30, 45, 60].map { Self.noon + $0 * Self.minute })
        #expect(b.entry.nextSlot == Self.noon + 75 * Self.minute)
    }

    // MARK: overlap

    @Test("overlap = skip: a slot while the previous run waits or runs does not run; once it ended, the next does")
    func overlapSkip() {
        let b = Book([Self.every(Self.minute)], at: Self.noon + 1)
        b.run(at: Self.noon + Self.minute)
        b.runner.states["job1"] = .running
        b.run(at: Self.noon + 2 * Self.minute)
        #expect(b.runner.runs.count == 1, "ran beside its still running previous run")
        #expect(b.entry.metrics.skips == 1)
        b.runner.states["job1"] = .completed
        b.run(at: Self.noon + 3 * Self.minute)
        #expect(b.runner.slots == [Self.noon + Self.minute, Self.noon + 3 * Self.minute])
    }

    @Test("overlap = queue runs anyway; overlap = cancel_previous cancels the previous run first")
    func overlapQueueAndCancelPrevious() {
        let queued = Book([Self.every(Self.minute) { $0.overlap = .queue }], at: Self.noon + 1)
        queued.run(at: Self.noon + Self.minute)
        queued.run(at: Self.noon + 2 * Self.minute)
        #expect(queued.runner.runs.count == 2)
        #expect(queued.runner.cancelled.isEmpty)

        let cancelling = Book([Self.every(Self.minute) { $0.overlap = .cancelPrevious }], at: Self.noon + 1)
        cancelling.run(at: Self.noon + Self.minute)
        cancelling.run(at: Self.noon + 2 * Self.minute)
        #expect(cancelling.runner.runs.count == 2)
        #expect(cancelling.runner.cancelled == ["job1"])
    }

    // MARK: jitter

    @Test("jitter: a fixed delay below the bound, the same on every start of a host, and the slot runs after it")
    func jitterIsAStableDelayWithinItsBound() {
        let schedules = (0..<20).map { i in Self.every(10 * Self.minute, name: "s\(i)") { $0.jitterMs = 30_000 } }
        let first = Book(schedules, at: Self.noon + 1)
        let again = Book(schedules, at: Self.noon + 1)
        let delays = first.book.entries.mapValues(\.delayMs)
        #expect(delays == again.book.entries.mapValues(\.delayMs), "the delays changed across a restart")
        #expect(delays.values.allSatisfy { (0..<30_000).contains($0) })
        #expect(Set(delays.values).count > 10, "twenty schedules, hardly spread: \(delays)")
        let other = Book(schedules, at: Self.noon + 1, hostKey: "another host")
        #expect(other.book.entries.mapValues(\.delayMs) != delays, "another host got the same delays")

        // A start 20 s after a slot whose delayed run is still ahead runs that slot, then the next one.
        let one = Book([Self.every(10 * Self.minute) { $0.jitterMs = 30_000 }], at: Self.noon + 20_000)
        let delay = one.entry.delayMs
        let due = delay > 20_000 ? Self.noon : Self.noon + 10 * Self.minute
        #expect(one.entry.nextRun == due + delay)
        one.run(at: due + delay - 1)
        #expect(one.runner.runs.isEmpty, "ran before its delay")
        one.run(at: due + delay)
        #expect(one.runner.slots == [due])
    }

    // MARK: across restarts and reloads

    @Test("the last slot is saved: a restart after a downtime catches up once; one within the slot runs nothing again")
    func theLastSlotSurvivesARestart() {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = Book([Self.every(Self.minute)], at: Self.noon + 1, directory: dir)
        before.run(at: Self.noon + Self.minute + 10)
        #expect(before.runner.runs.count == 1)

        let sameSlot = Book([Self.every(Self.minute)], at: Self.noon + Self.minute + 500, directory: dir)
        sameSlot.run(at: Self.noon + Self.minute + 600)
        #expect(sameSlot.runner.runs.isEmpty, "a restart within the slot ran it again")
        #expect(sameSlot.entry.lastJob == "job1")

        let afterDowntime = Book([Self.every(Self.minute)], at: Self.noon + 4 * Self.minute + 100, directory: dir)
        afterDowntime.run(at: Self.noon + 4 * Self.minute + 100)
        #expect(afterDowntime.runner.slots == [Self.noon + 4 * Self.minute], "catch_up = one after the downtime")
    }

    @Test("a damaged state file is reported and replaced: the schedules start afresh on their grid, nothing runs twice or crashes")
    func aDamagedStateFileStartsAfresh() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("{\"schedules\": [not json".utf8).write(to: URL(fileURLWithPath: dir + "/schedules.json"))
        let captured = CapturedLog()
        let b = Book([Self.every(Self.minute)], at: Self.noon + 30_000, directory: dir,
                     log: DaemonLogger(Logger(label: "test") { _ in captured }))
        #expect(captured.messages.contains { $0.contains("not a schedules state file") }, "\(captured.messages)")
        #expect(b.entry.nextSlot == Self.noon + Self.minute)
        b.run(at: Self.noon + Self.minute)
        let again = Book([Self.every(Self.minute)], at: Self.noon + Self.minute + 10, directory: dir)
        #expect(again.entry.lastSlot == Self.noon + Self.minute, "the file was not written anew")
    }

    @Test("a schedule whose when changed starts on its new grid: no catch-up for slots it never had")
    func aChangedWhenStartsAfresh() {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = Book([Self.every(Self.minute)], at: Self.noon + 1, directory: dir)
        before.run(at: Self.noon + Self.minute)
        let changed = Book([Self.every(2 * Self.minute)], at: Self.noon + 30 * Self.minute + 1, directory: dir)
        changed.run(at: Self.noon + 30 * Self.minute + 1)
        #expect(changed.runner.runs.isEmpty)
        #expect(changed.entry.nextSlot == Self.noon + 32 * Self.minute)
    }

    @Test("a reload keeps a schedule's last slot, last job and pause, adds new ones on their grid, drops removed ones")
    func aReloadKeepsState() {
        let b = Book([Self.every(Self.minute, name: "kept"), Self.every(Self.minute, name: "gone")], at: Self.noon + 1)
        b.run(at: Self.noon + Self.minute)
        _ = b.book.handle(.pause, name: "kept")
        b.now = Self.noon + Self.minute + 5
        b.book.reload(["kept": Self.every(Self.minute, name: "kept"), "new": Self.every(Self.minute, name: "new")])
        #expect(Set(b.book.entries.keys) == ["kept", "new"])
        let kept = b.book.entries["kept"]!
        #expect(kept.paused && kept.lastJob != nil && kept.lastSlot == Self.noon + Self.minute)
        #expect(b.book.entries["new"]!.nextSlot == Self.noon + 2 * Self.minute)
    }

    // MARK: pause, resume, trigger

    @Test("pause stops the slots; resume goes on from the next slot without catching up the paused ones")
    func pauseAndResume() {
        let b = Book([Self.every(Self.minute)], at: Self.noon + 1)
        _ = b.book.handle(.pause, name: "s")
        b.run(at: Self.noon + 3 * Self.minute)
        #expect(b.runner.runs.isEmpty)
        #expect(b.entry.nextRun == nil)
        b.now = Self.noon + 3 * Self.minute + 10
        _ = b.book.handle(.resume, name: "s")
        b.run(at: Self.noon + 3 * Self.minute + 20)
        #expect(b.runner.runs.isEmpty, "resume caught up the paused slots")
        b.run(at: Self.noon + 4 * Self.minute)
        #expect(b.runner.slots == [Self.noon + 4 * Self.minute])
    }

    @Test("trigger runs now, outside the grid; a refused submit is the trigger's error; an unknown name is unknown_schedule")
    func triggerAndItsRefusals() throws {
        let b = Book([Self.every(Self.minute)], at: Self.noon + 1)
        let reply = try b.book.handle(.trigger, name: "s").get()
        #expect(b.runner.slots == [nil])
        #expect(reply.contains { $0.0 == "job" && $0.1 == .string("job1") })
        #expect(b.entry.nextSlot == Self.noon + Self.minute, "a trigger moved the grid")

        b.runner.refusal = ProtocolError(.queueFull, "worker w1 has 5 jobs queued, the limit")
        #expect(throws: ProtocolError.self) { try b.book.handle(.trigger, name: "s").get() }
        if case .failure(let e) = b.book.handle(.trigger, name: "s") { #expect(e.code == .queueFull) }
        if case .failure(let e) = b.book.handle(.pause, name: "nope") { #expect(e.code == .unknownSchedule) } else {
            Issue.record("pausing an unknown schedule succeeded")
        }
    }
}
