import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// What a schedule book needs of the daemon: `JobScheduler` in loopd, a
/// recorder in tests. Main thread only.
protocol ScheduleRunner: AnyObject {
    /// Submits one run of `schedule` (`slot`: the slot it is for, nil for a
    /// `trigger`): the new job's id, or why it was refused.
    func submitRun(of schedule: DaemonConfig.Schedule, slot: Int64?) -> Result<String, ProtocolError>
    /// The state of a job loopd knows, nil for one it has forgotten.
    func state(ofJob id: String) -> JobState?
    /// Cancels a job that has not ended (`overlap = "cancel_previous"`).
    func cancelRun(_ id: String)
}

/// The configured schedules and when each fires next (docs/OPERATIONS.md,
/// "Schedules"). One timer on the main loop stands for all of them: it is
/// set for the earliest next run, so schedules that are not due cost no
/// wake-up at all. When it fires, every due schedule is looked at once:
/// the slots it missed are handled by its `catch_up` policy (R13's rule
/// for a repeating timer by default: one run for all of them, then back
/// on the grid), the previous run by its `overlap` policy; the last slot
/// is saved before any job is submitted, so a slot never runs twice, even
/// across a crash. Slots are wall-clock instants (Unix milliseconds), read
/// from `now`; the loop's monotonic timer only wakes the book up, and a
/// wake-up that comes early (the wall clock was set back) just re-arms.
/// Main thread only.
final class ScheduleBook: @unchecked Sendable {
    /// One schedule and what it has done.
    struct Entry {
        var config: DaemonConfig.Schedule
        /// This host's fixed delay after each slot (`jitter`).
        var delayMs: Int64
        /// The first slot not yet looked at; nil: none within the search bound.
        var nextSlot: Int64?
        var lastSlot: Int64?
        var lastJob: String?
        var lastRefusal: String?
        var paused = false
        let metrics: ScheduleMetrics

        var nextRun: Int64? { paused ? nil : nextSlot.map { $0 + delayMs } }
        var saved: ScheduleStateFile.Saved {
            .init(spec: config.when.description, lastSlot: lastSlot, lastJob: lastJob, paused: paused)
        }
    }

    /// The most slots one look counts through for a cron schedule before it
    /// skips ahead to the last week (a per-minute schedule after months away).
    static let slotScanLimit = 100_000

    private(set) var entries: [String: Entry] = [:]
    private let log: DaemonLogger
    private let registry: ScheduleMetrics.Registry
    private let stateFile: ScheduleStateFile?
    /// Seeds each schedule's `jitter` delay: the same on every start of this host.
    private let hostKey: String
    /// The wall clock, Unix milliseconds (tests set their own).
    var now: () -> Int64 = { unixMilliseconds() }
    /// The zones cron schedules are read in.
    var zones: (utc: ZoneOffsets, local: ZoneOffsets) = (.utc, .local)
    /// Held strongly: the runner never holds the book, so there is no
    /// cycle, and a weak reference would give the scheduler a side table,
    /// which puts each of its retains (several a job) on the slow path.
    var runner: (any ScheduleRunner)?
    private var timer: LoopTimer?
    private var loop: Loop?
    /// The daemon is stopping: no slot is looked at again (it would be
    /// refused, and saved as done).
    private var stopped = false

    init(log: DaemonLogger, registry: ScheduleMetrics.Registry, stateFile: ScheduleStateFile?, hostKey: String) {
        self.log = log
        self.registry = registry
        self.stateFile = stateFile
        self.hostKey = hostKey
    }

    /// The host's stable key for jitter: its machine id (as systemd's
    /// `FixedRandomDelay=`), else its host name.
    static func currentHostKey() -> String {
        if case .success(let bytes) = FileSystem.readFile("/etc/machine-id", limit: 4096), bytes.count > 1 {
            return String(decoding: bytes, as: UTF8.self)
        }
        return hostName() ?? ""
    }

    // MARK: setting up

    /// Takes the configured schedules, with what was saved of them, and
    /// arms the timer on `loop` (nil: tests call `runDue` themselves).
    func start(_ schedules: [String: DaemonConfig.Schedule], on loop: Loop?) {
        self.loop = loop
        var saved: [String: ScheduleStateFile.Saved] = [:]
        switch stateFile?.load() {
        case .success(let s)?: saved = s
        case .failure(let e)?: log(.warning, "schedules: \(e); every schedule starts afresh on its grid")
        case nil: break
        }
        install(schedules, saved: saved)
        if !entries.isEmpty || !saved.isEmpty { persist() }
        arm()
    }

    /// A reload: new schedules start on their grid, removed ones are
    /// dropped, and those that stay keep their last slot, last job and
    /// pause (a changed `when` starts on its new grid from now).
    func reload(_ schedules: [String: DaemonConfig.Schedule]) {
        install(schedules, saved: entries.mapValues(\.saved), keeping: entries)
        persist()
        arm()
    }

    private func install(_ schedules: [String: DaemonConfig.Schedule], saved: [String: ScheduleStateFile.Saved],
                         keeping old: [String: Entry] = [:]) {
        let at = now()
        var fresh: [String: Entry] = [:]
        for (name, config) in schedules {
            let delay = scheduleJitter(name: name, hostKey: hostKey, maxMs: config.jitterMs)
            var e = Entry(config: config, delayMs: delay,
                          metrics: old[name]?.metrics ?? registry.series(for: name))
            if let s = saved[name] {
                e.lastJob = s.lastJob
                e.paused = s.paused
                e.lastRefusal = old[name]?.lastRefusal
                if s.spec == config.when.description, let last = s.lastSlot {
                    e.lastSlot = last
                    e.nextSlot = slot(after: last, of: e)
                }
            }
            if e.lastSlot == nil { e.nextSlot = slot(after: at - delay, of: e) }
            fresh[name] = e
        }
        entries = fresh
    }

    // MARK: firing

    /// Looks at every schedule due by `now()`: decides its runs, saves the
    /// slots, then submits; re-arms for the next.
    func runDue() {
        guard !stopped else { return }
        let at = now()
        var plans: [(name: String, runs: [Int64])] = []
        for name in entries.keys.sorted() {
            guard var e = entries[name], let due = e.nextRun, due <= at else { continue }
            let runs = plan(&e, at: at)
            entries[name] = e
            plans.append((name, runs))
        }
        if !plans.isEmpty { persist() }
        for (name, runs) in plans {
            guard var e = entries[name] else { continue }
            fire(&e, runs: runs, at: at)
            entries[name] = e
        }
        if plans.contains(where: { !$0.runs.isEmpty }) { persist() }
        arm()
    }

    /// The runs one look at `e` makes (`catch_up`), counting the slots it
    /// leaves out; moves its grid past `at`.
    private func plan(_ e: inout Entry, at: Int64) -> [Int64] {
        let horizon = at - e.delayMs
        let due = dueSlots(of: e, through: horizon)
        guard let latest = due.latest.last, let firstDue = e.nextSlot else { return [] }
        e.lastSlot = latest
        e.nextSlot = slot(after: latest, of: e)
        let onTime = at - (latest + e.delayMs) <= lateAllowance(after: latest, next: e.nextSlot)
        let runs: [Int64]
        switch e.config.catchUp {
        case .one: runs = [latest]
        case .all: runs = due.latest
        case .none: runs = onTime ? [latest] : []
        }
        let missed = due.total - runs.count
        if missed > 0 || !onTime {
            e.metrics.skipped(.missed, count: missed)
            let ran = runs.isEmpty ? "none run (catch_up = \"none\")" : "\(runs.count) run (catch_up = \"\(e.config.catchUp.rawValue)\")"
            log(.notice, "schedule \(e.config.name): \(due.total)\(due.capped ? "+" : "") slots due since "
                + "\(Timestamp.format(unixMilliseconds: firstDue)); \(ran)", [(.schedule, e.config.name)])
        }
        return runs
    }

    /// A slot is on time while loopd looks at it no later than halfway to
    /// the next slot, and at most a minute after it.
    private func lateAllowance(after slot: Int64, next: Int64?) -> Int64 {
        min(60_000, next.map { ($0 - slot) / 2 } ?? 60_000)
    }

    /// The slots of `e` from its next slot through `horizon`: how many,
    /// and the latest of them (up to its `catch_up_limit`), oldest first.
    func dueSlots(of e: Entry, through horizon: Int64) -> (latest: [Int64], total: Int, capped: Bool) {
        guard let first = e.nextSlot, first <= horizon else { return ([], 0, false) }
        let keep = e.config.catchUp == .all ? e.config.catchUpLimit : 1
        if case .every(let period) = e.config.when {
            let count = Int((horizon - first) / period) + 1
            let newest = first + Int64(count - 1) * period
            let kept = min(keep, count)
            return ((0..<kept).map { newest - Int64(kept - 1 - $0) * period }, count, false)
        }
        var latest: [Int64] = []
        var total = 0, capped = false
        var s: Int64? = first
        while let slot = s, slot <= horizon {
            total += 1
            latest.append(slot)
            if latest.count > keep { latest.removeFirst() }
            if total == Self.slotScanLimit {
                // Months of a dense schedule missed: the last week's slots stand for them.
                capped = true
                s = self.slot(after: max(slot, horizon - 7 * 86_400_000), of: e)
            } else {
                s = self.slot(after: slot, of: e)
            }
        }
        return (latest, total, capped)
    }

    private func fire(_ e: inout Entry, runs: [Int64], at: Int64) {
        for (i, slot) in runs.enumerated() {
            // The runs of one look go together: overlap is with the run before them.
            if i == 0, let previous = e.lastJob, let state = runner?.state(ofJob: previous), !state.isFinal {
                switch e.config.overlap {
                case .skip:
                    e.metrics.skipped(.overlap, count: runs.count)
                    log(.info, "schedule \(e.config.name): slot \(Timestamp.format(unixMilliseconds: slot)) skipped: "
                        + "job \(previous) is still \(state.rawValue) (overlap = \"skip\")",
                        [(.schedule, e.config.name), (.jobID, previous)])
                    return
                case .queue:
                    break
                case .cancelPrevious:
                    runner?.cancelRun(previous)
                }
            }
            submit(&e, slot: slot, lateMs: max(0, at - (slot + e.delayMs)))
        }
    }

    /// Submits one run of `e` (`lateMs`: how late a slot's run is; nil
    /// for a trigger); the refusal, if any, is also kept for `schedules`.
    @discardableResult
    private func submit(_ e: inout Entry, slot: Int64?, lateMs: Int64?) -> ProtocolError? {
        guard let runner else { return ProtocolError(.shuttingDown, "loopd is stopping") }
        let name = e.config.name
        let what = slot.map { "slot \(Timestamp.format(unixMilliseconds: $0))" } ?? "a trigger"
        switch runner.submitRun(of: e.config, slot: slot) {
        case .success(let job):
            e.lastJob = job
            e.lastRefusal = nil
            e.metrics.fired(lateSeconds: lateMs.map { Double($0) / 1000 })
            var fields: [(LogField, String)] = [(.schedule, name), (.jobID, job), (.action, e.config.job.action)]
            if let slot { fields.append((.slot, Timestamp.format(unixMilliseconds: slot))) }
            log(.info, "schedule \(name): \(what) submitted job \(job)", fields, id: .scheduleFired)
            return nil
        case .failure(let error):
            e.lastRefusal = error.description
            e.metrics.skipped(.refused, count: 1)
            log(.warning, "schedule \(name): \(what) was refused: \(error)", [(.schedule, name)])
            return error
        }
    }

    // MARK: requests

    /// `pause`, `resume`, `trigger` (administrators only; the caller checks).
    func handle(_ command: ScheduleCommand, name: String) -> Result<[(String, JSON)], ProtocolError> {
        guard var e = entries[name] else {
            return .failure(ProtocolError(.unknownSchedule, "no schedule named \"\(name)\""))
        }
        var reply: [(String, JSON)] = [("schedule", .string(name))]
        switch command {
        case .pause:
            e.paused = true
        case .resume:
            // The slots of the pause are not caught up: it was asked for.
            if e.paused { e.nextSlot = slot(after: now() - e.delayMs, of: e) }
            e.paused = false
        case .trigger:
            if let refusal = submit(&e, slot: nil, lateMs: nil) {
                entries[name] = e
                return .failure(refusal)
            }
            reply.append(("job", .string(e.lastJob ?? "")))
        }
        entries[name] = e
        persist()
        arm()
        reply.append(("paused", .bool(e.paused)))
        return .success(reply)
    }

    /// `schedules`: every schedule, by name. Its jobs are loopd's own, so
    /// only an administrator is shown which job each last submitted.
    func listing(showingJobs: Bool) -> JSON {
        .array(entries.keys.sorted().map { name in
            let e = entries[name]!
            let c = e.config
            var f: [(String, JSON)] = [("name", .string(name)), ("action", .string(c.job.action)),
                                       ("when", .string(c.when.description)), ("catch_up", .string(c.catchUp.rawValue)),
                                       ("overlap", .string(c.overlap.rawValue)), ("jitter_ms", .integer(c.jitterMs)),
                                       ("delay_ms", .integer(e.delayMs)), ("paused", .bool(e.paused))]
            f.append(("next_run", e.nextRun.map { .string(Timestamp.format(unixMilliseconds: $0)) } ?? .null))
            f.append(("last_slot", e.lastSlot.map { .string(Timestamp.format(unixMilliseconds: $0)) } ?? .null))
            if showingJobs {
                f.append(("last_job", e.lastJob.map(JSON.string) ?? .null))
                let state = e.lastJob.flatMap { runner?.state(ofJob: $0) }
                f.append(("last_state", state.map { .string($0.rawValue) } ?? .null))
            }
            f.append(("last_error", e.lastRefusal.map(JSON.string) ?? .null))
            f.append(("fired", .integer(e.metrics.fires)))
            f.append(("skipped", .integer(e.metrics.skips)))
            return .object(f)
        })
    }

    // MARK: plumbing

    private func slot(after unixMs: Int64, of e: Entry) -> Int64? {
        let offsets: ZoneOffsets
        if case .cron(_, let zone) = e.config.when { offsets = zone == .utc ? zones.utc : zones.local } else { offsets = zones.utc }
        return e.config.when.nextSlot(after: unixMs, offsets: offsets)
    }

    private func persist() {
        guard let stateFile else { return }
        do {
            try stateFile.save(entries.mapValues(\.saved))
        } catch {
            log(.error, "schedules: cannot save their last slots to \(stateFile.path): \(error); "
                + "a restart may run a slot again or miss one")
        }
    }

    /// Sets the timer for the earliest next run. Its tolerance lets the
    /// loop merge the wake-up with others close by (R14): up to a tenth of
    /// a second, never later than the next run is allowed to be late.
    private func arm() {
        timer?.invalidate()
        timer = nil
        guard !stopped, let loop, let due = entries.values.compactMap(\.nextRun).min() else { return }
        let delay = max(0, due - now())
        let t = LoopTimer(after: .milliseconds(delay), tolerance: .milliseconds(100)) { [unowned self] _ in runDue() }
        timer = t
        loop.add(t, forMode: .common)
    }

    /// Stops the timer for good (the daemon is stopping).
    func stop() {
        stopped = true
        timer?.invalidate()
        timer = nil
    }
}
