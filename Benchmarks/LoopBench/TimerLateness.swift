import LoopPlatform
import Dispatch
import Foundation
import LoopRuntime
import NIOCore
import NIOPosix

/// (c) Lateness of a 10 ms repeating timer: lateness = fire time − (anchor +
/// k × interval), the anchor read on the timer's own thread just before the
/// timer is armed, k the grid point the fire was due for (see `FireLog`).
/// Subjects run at once with staggered grids, or one after another (see
/// `concurrent`).
struct TimerLatenessBenchmark {
    let interval: Duration = .milliseconds(10)
    let seconds: Double
    /// All subjects at once, their grids staggered by 2 ms, so each meets the
    /// same disturbances from outside (the default); or one after another,
    /// each alone on the process (best on a quiet machine).
    let concurrent: Bool
    /// Windows of `seconds` measured one after another; each statistic is
    /// reported as the median over them.
    let rounds: Int

    private var fires: Int { Int(seconds / 0.010) }
    private var intervalNs: UInt64 { UInt64(interval.components.attoseconds / 1_000_000_000) + UInt64(interval.components.seconds) * 1_000_000_000 }

    func run() -> (MarkdownTable, [TargetCheck]) {
        let how = concurrent ? "all at once, phases 2 ms apart" : "one after another"
        print("(c) timer lateness: \(rounds) × \(fires) fires of a 10 ms timer per subject, \(how) …")
        return report((0..<rounds).map { _ in measureRound() })
    }

    /// One window of `seconds`: every subject's fires.
    private func measureRound() -> [Subject: FireLog] {
        let subjects: [(Subject, () -> Armed)] = [
            (.loopRuntime, loopRuntime), (.dispatch, dispatch), (.nio, nio), (.foundation, foundation), (.raw, raw),
        ]
        var results: [Subject: FireLog] = [:]
        if concurrent {
            var armed: [(Subject, Armed)] = []
            for (subject, start) in subjects {
                armed.append((subject, start()))
                sleepSeconds(0.002)  // staggers the grids: no two subjects' fires are due together
            }
            for (subject, timer) in armed {
                timer.log.waitFull(seconds: seconds)
                results[subject] = timer.log
            }
            for (_, timer) in armed { timer.stop() }
        } else {
            for (subject, start) in subjects {
                sleepSeconds(0.3)  // let the previous subject's threads finish exiting
                let timer = start()
                timer.log.waitFull(seconds: seconds)
                timer.stop()
                results[subject] = timer.log
            }
        }
        return results
    }

    /// One statistic of the lateness, as the median over the rounds.
    private struct Statistic {
        let name: String
        let pick: (Percentiles) -> Int64

        func median(_ perRound: [Percentiles]) -> Int64 {
            let values = perRound.map(pick).sorted()
            return values[(values.count - 1) / 2]  // the lower middle: a value one round measured
        }
    }

    private func report(_ rounds: [[Subject: FireLog]]) -> (MarkdownTable, [TargetCheck]) {
        let perRound = Dictionary(uniqueKeysWithValues: Subject.allCases.map { subject in
            (subject, rounds.map { Percentiles($0[subject]!.lateness) })
        })
        let title = "(c) lateness of a 10 ms repeating timer over \(Format.fixed(seconds, 1)) s"
            + (rounds.count > 1 ? ", median of \(rounds.count) rounds" : "") + " (fire − ideal grid point)"
        var table = MarkdownTable.subjects(title: title)
        let p99 = Statistic(name: "p99", pick: \.p99)
        let lr99 = p99.median(perRound[.loopRuntime]!)
        let checks = [Subject.foundation, .nio].map { peer in
            let peer99 = p99.median(perRound[peer]!)
            return TargetCheck(section: "(c)", target: "p99 ≤ \(peer.rawValue)",
                               measured: "\(Format.micros(lr99)) vs \(Format.micros(peer99))", passed: lr99 <= peer99)
        }
        let statistics = [Statistic(name: "p50", pick: \.p50), p99, Statistic(name: "max", pick: \.max),
                          Statistic(name: "min", pick: \.min)]
        for statistic in statistics {
            let values = perRound.mapValues(statistic.median)
            let lr = values[.loopRuntime]!
            let ratios = Subject.allCases.dropFirst().map { peer in
                "÷\(peer.rawValue) \(Format.ratio(Double(lr) / Double(values[peer]!)))"
            }.joined(separator: " · ")
            table.add(what: "lateness \(statistic.name)", values: values.mapValues(Format.micros),
                      ratios: statistic.name == "min" ? "" : ratios,
                      targets: statistic.name == "p99" ? checks.map(\.short).joined(separator: " · ") : "")
        }
        table.add(what: "fires / grid points skipped", values: Dictionary(uniqueKeysWithValues: Subject.allCases.map { s in
            (s, "\(rounds.map { $0[s]!.count }.reduce(0, +)) / \(rounds.map { $0[s]!.skipped }.reduce(0, +))")
        }))
        let eachRound = rounds.indices.map { i in
            "round \(i + 1): " + Subject.allCases.map { "\($0.rawValue) \(Format.micros(perRound[$0]![i].p99))" }
                .joined(separator: ", ")
        }.joined(separator: "; ")
        table.notes = [
            (concurrent
                ? "Concurrent: all five timers ran at once, grids staggered by 2 ms so no two fires are due together and "
                    + "every subject meets the same outside disturbances (`--sequential-timers` runs them one by one). "
                : "Sequential: one subject at a time, each alone on the process. ")
                + "Each statistic is the median of the rounds' values (the lower middle for an even count): "
                + "a 3 s window's p99 is its 3rd-worst fire, which one bad spell of the machine sets. "
                + "ratio = LoopRuntime ÷ peer (< 1: LoopRuntime more punctual). "
                + "A negative min would mean a timer fired early.",
            "p99 of each round: \(eachRound).",
            "Each fire's lateness is measured from the grid point it was due for, the one after the previous fire's, "
                + "so a stall counts in full (max is the longest one); when a timer skipped grid points after a late fire "
                + "(CF's and LoopTimer's rule R13), the next fires are matched from the latest grid point passed; skips are counted.",
            "LoopRuntime: LoopTimer(after: 10 ms, interval: 10 ms, tolerance: .zero) in .common on a LoopThread. "
                + "Dispatch: DispatchSourceTimer, leeway 0, .strict, on a serial queue. "
                + "NIO: fixed-rate chain of scheduleTask(deadline: anchor + k × 10 ms) (scheduleRepeatedTask is fixed-delay). "
                + "Foundation: Timer (interval 10 ms) in .common on a RunLoop thread. raw: timerfd (absolute, 10 ms interval) + epoll.",
        ]
        return (table, checks)
    }

    // MARK: - Subjects (each starts its thread, arms its timer and returns at once)

    /// A timer that is running: its log, and how to tear its thread down.
    private struct Armed {
        let log: FireLog
        let stop: () -> Void
    }

    private func loopRuntime() -> Armed {
        let worker = LoopThread(name: "bench-timer-lr")
        let log = FireLog(expected: fires, intervalNs: intervalNs)
        worker.perform(waitUntilDone: false) {
            let timer = LoopTimer(after: interval, interval: interval, tolerance: .zero) { timer in
                if log.record() { timer.invalidate() }
            }
            log.anchor()  // LoopTimer(after:) counts from the moment it is added
            worker.loop.add(timer, forMode: .common)
        }
        return Armed(log: log) { worker.stop() }
    }

    private func dispatch() -> Armed {
        let queue = DispatchQueue(label: "bench-timer-dispatch")
        let log = FireLog(expected: fires, intervalNs: intervalNs)
        let source = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        source.setEventHandler { if log.record() { source.cancel() } }
        queue.sync {  // sync: the source is not Sendable, so it may not cross into an async block
            log.anchor()
            source.schedule(deadline: .now() + .milliseconds(10), repeating: .milliseconds(10), leeway: .nanoseconds(0))
            source.activate()
        }
        return Armed(log: log) { source.cancel() }
    }

    private func nio() -> Armed {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let log = FireLog(expected: fires, intervalNs: intervalNs)
        let step = Int64(intervalNs)
        /// Schedules fire `k` at its grid point; each fire schedules the next.
        @Sendable func schedule(_ k: Int64, from anchor: NIODeadline) {
            loop.scheduleTask(deadline: anchor + .nanoseconds(k * step)) {
                if !log.record() { schedule(k + 1, from: anchor) }
            }
        }
        loop.execute {
            log.anchor()
            schedule(1, from: .now())
        }
        return Armed(log: log) { try? group.syncShutdownGracefully() }
    }

    private func foundation() -> Armed {
        let thread = FoundationLoopThread(name: "bench-timer-cf")
        let log = FireLog(expected: fires, intervalNs: intervalNs)
        let seconds = Double(intervalNs) / 1e9
        thread.perform {
            log.anchor()
            // Timer(timeInterval:repeats:) fires at once on Linux; name the first fire date.
            let timer = Timer(fire: Date(timeIntervalSinceNow: seconds), interval: seconds, repeats: true) { timer in
                if log.record() { timer.invalidate() }
            }
            thread.addOnLoopThread(timer)
        }
        return Armed(log: log) { thread.stop() }
    }

    private func raw() -> Armed {
        let log = FireLog(expected: fires, intervalNs: intervalNs)
        let intervalNs = self.intervalNs
        let thread = NativeThread(name: "bench-timer-raw") {
            let timer: TimerFD
            let epoll: Epoll
            do throws(PlatformError) {
                timer = try TimerFD()
                epoll = try Epoll()
                try epoll.add(timer.fd, interest: .readable, token: 0)
            } catch {
                fatalError("the raw timer cannot start: \(error)")
            }
            log.anchor()
            timer.arm(at: log.anchorNanoseconds + intervalNs, repeatingEvery: intervalNs)
            var full = false
            while !full {
                guard (try? epoll.wait(timeoutMilliseconds: -1, { _ in })) == 1 else { continue }
                timer.drain()  // read only to re-arm readiness
                // Several expirations = grid points missed: one wake-up, one fire (FireLog counts the skip).
                full = log.record()
            }
        }
        return Armed(log: log) { thread.join() }  // the thread ends by itself after the last fire
    }
}

/// The fire times of one timer. Written only from the timer's thread, one
/// callback at a time; read by the main thread only after `waitFull`, which
/// the semaphore inside `Finish` orders after every write — hence no lock.
///
/// Each fire serves the grid point after the previous fire's (due at
/// anchor + k × interval) and its lateness is measured from that point, so
/// a stall shows at its full length, however many intervals it spans. A
/// timer that fires once for several missed points (CF, LoopTimer's R13, a
/// timerfd read with several expirations) then goes on from the latest
/// point already passed: the fire is matched to that point for the count,
/// so later fires are not each charged the intervals it covered. Skipped
/// points are counted and shown.
private final class FireLog: @unchecked Sendable {
    let expected: Int
    let intervalNs: UInt64
    private(set) var anchorNanoseconds: UInt64 = 0
    /// Per fire: when it came, the grid point it was due for (the one after
    /// the previous fire's), and the point it is matched to (`due`, or the
    /// latest point passed if later).
    private var fires: [(stamp: UInt64, due: UInt64, k: UInt64)] = []
    private let full = Finish()

    init(expected: Int, intervalNs: UInt64) {
        self.expected = expected
        self.intervalNs = intervalNs
        fires.reserveCapacity(expected)
    }

    var count: Int { fires.count }

    /// Grid points that never got a fire of their own.
    var skipped: Int { Int(fires.last?.k ?? 0) - fires.count }

    /// Timer thread: "k = 0 is now". Call just before arming the timer.
    func anchor() { anchorNanoseconds = monotonicNanoseconds() }

    /// Timer thread: records a fire; true once the last grid point has fired (stop the timer).
    func record() -> Bool {
        let now = monotonicNanoseconds()
        guard (fires.last?.k ?? 0) < UInt64(expected) else { return true }
        let next = (fires.last?.k ?? 0) + 1
        let latestPassed = now > anchorNanoseconds ? (now - anchorNanoseconds) / intervalNs : 0
        fires.append((now, next, Swift.max(next, latestPassed)))
        if fires.last!.k >= UInt64(expected) {
            full.finish()
            return true
        }
        return false
    }

    /// Main thread: waits for the last fire (bounded: twice the run plus 5 s).
    func waitFull(seconds: Double) {
        guard full.wait(seconds: seconds * 2 + 5) != nil else {
            fatalError("timer benchmark stalled: \(expected) fires expected within \(seconds * 2 + 5) s")
        }
    }

    /// Lateness of each fire against the grid point it was due for,
    /// nanoseconds (negative = early); not capped at one interval.
    var lateness: [Int64] {
        fires.map { Int64($0.stamp) - Int64(anchorNanoseconds + $0.due * intervalNs) }
    }
}
