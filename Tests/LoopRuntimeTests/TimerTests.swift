import Testing
@testable import LoopRuntime

/// R12–R15: timers fire only in their modes and between handlers, keep their
/// grid without bursts, may be late within tolerance but never early, and a
/// one-shot or invalidated timer is done. Time is a `ManualClock` wherever a
/// test reasons about it.
@Suite struct TimerTests {
    @Test func aDelayTimersFireDateIsResolvedWhenAddedToALoop() {
        let clock = ManualClock()
        let (before, after, t0) = onThread { () -> (LoopInstant?, LoopInstant?, LoopInstant) in
            let loop = Loop.current
            loop.clock = .manual(clock)
            let timer = LoopTimer(after: .milliseconds(10)) { _ in }
            let before = timer.fireDate
            clock.advance(by: .milliseconds(500))
            let t0 = clock.now()
            loop.add(timer, forMode: .default)
            return (before, timer.fireDate, t0)
        }
        #expect(before == nil)
        #expect(after == t0 + .milliseconds(10))
    }

    // MARK: R12

    @Test func R12_aTimerFiresOnlyWhileTheLoopRunsOneOfItsModes() {
        let clock = ManualClock()
        let (counts, results) = onThread { () -> ([Int], [Loop.RunResult]) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let fired = Counter()
            let timer = LoopTimer(after: .milliseconds(10)) { _ in fired.increment() }
            loop.add(timer, forMode: "r12-other")
            loop.add(keepAlive(), forMode: .default)
            clock.advance(by: .milliseconds(50))  // long overdue
            var counts: [Int] = [fired.count]     // the loop is not running: nothing fired
            let r1 = loop.run(mode: .default, timeout: .zero)
            counts.append(fired.count)            // running another mode: still nothing
            let r2 = boundedRun(loop, mode: "r12-other")
            counts.append(fired.count)
            return (counts, [r1, r2])
        }
        #expect(counts == [0, 0, 1])
        #expect(results == [.timedOut, .finished])
    }

    @Test func R12_aTimerDueDuringAnotherTimersHandlerFiresOnTheNextPass() {
        let clock = ManualClock()
        let (log, result) = onThread { () -> ([String], Loop.RunResult) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let log = Recorder<String>()
            let a = LoopTimer(after: .milliseconds(10)) { _ in
                log.append("A begin")
                clock.advance(by: .milliseconds(10))  // B (due at +15) comes due while A runs
                log.append("A end")
            }
            let b = LoopTimer(after: .milliseconds(15)) { _ in log.append("B") }
            loop.add(a, forMode: .default)
            loop.add(b, forMode: .default)
            loop.add(activityLogger(log, .beforeTimers), forMode: .default)
            clock.advance(by: .milliseconds(10))
            let result = boundedRun(loop)
            return (log.all, result)
        }
        #expect(log == ["beforeTimers", "A begin", "A end", "beforeTimers", "B"])
        #expect(result == .finished)
    }

    @Test func R12_aTimerDueDuringASourceHandlerFiresAfterTheHandlerReturns() {
        let clock = ManualClock()
        let log = onThread { () -> [String] in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let log = Recorder<String>()
            let timer = LoopTimer(after: .milliseconds(10)) { _ in log.append("timer") }
            let busy = LoopSource {
                log.append("handler begin")
                clock.advance(by: .milliseconds(20))
                log.append("handler end")
            }
            loop.add(timer, forMode: .default)
            loop.add(busy, forMode: .default)
            busy.signal()
            let result = boundedRun(loop, returnAfterSourceHandled: true)
            log.append("\(result)")
            return log.all
        }
        #expect(log == ["handler begin", "handler end", "timer", "handledSource"])
    }

    /// A timer does not fire while its own handler runs: a run nested in
    /// that handler, in another of the timer's modes, passes it over (Core
    /// Foundation's engine does the same), and the one-shot timer is spent
    /// once, by the firing that ran (R15).
    @Test func R12_R15_aRunNestedInATimersHandlerPassesThatTimerOver() {
        let clock = ManualClock()
        let (log, valid) = onThread { () -> ([String], Bool) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let log = Recorder<String>()
            let nested: Loop.Mode = "r12-nested"
            let stopper = LoopSource { loop.stop() }
            loop.add(stopper, forMode: nested)
            let timer = LoopTimer(after: .milliseconds(10)) { _ in
                log.append("fired")
                stopper.signal()  // the nested run makes one pass, then stops
                log.append("nested \(boundedRun(loop, mode: nested))")
            }
            loop.add(timer, forMode: .default)
            loop.add(timer, forMode: nested)
            clock.advance(by: .milliseconds(10))
            log.append("outer \(boundedRun(loop))")
            return (log.all, timer.isValid)
        }
        #expect(log == ["fired", "nested stopped", "outer finished"])
        #expect(!valid)
    }

    /// A repeating timer that a nested run passed over (see above) is
    /// rescheduled by the firing that ran, in every one of its modes: it
    /// fires at its next grid point in the mode the nested run used (R13).
    @Test func R12_R13_aRepeatingTimerPassedOverByANestedRunKeepsItsGridInEveryMode() {
        let clock = ManualClock()
        let log = onThread { () -> [String] in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let log = Recorder<String>()
            let fires = Counter()
            let nested: Loop.Mode = "r13-nested"
            let stopper = LoopSource { loop.stop() }
            loop.add(stopper, forMode: nested)
            let timer = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { _ in
                fires.increment()
                log.append("fired \(fires.count)")
                guard fires.count == 1 else { return }
                stopper.signal()
                log.append("nested \(boundedRun(loop, mode: nested))")
                loop.stop()
            }
            loop.add(timer, forMode: .default)
            loop.add(timer, forMode: nested)
            clock.advance(by: .milliseconds(10))
            log.append("outer \(boundedRun(loop))")
            clock.advance(by: .milliseconds(10))
            stopper.signal()
            log.append("nested \(boundedRun(loop, mode: nested))")
            timer.invalidate()
            return log.all
        }
        #expect(log == ["fired 1", "nested stopped", "outer stopped", "fired 2", "nested stopped"])
    }

    // MARK: R13

    struct GridOutcome: Sendable {
        var t0: LoopInstant
        var firstFires: [LoopInstant]
        var nextAfterFirst: LoopInstant?
        var firesAfterAnotherPassAtTheSameInstant: Int
        var fires: [LoopInstant]
        var nextAtEnd: LoopInstant?
    }

    @Test func R13_missedGridPointsFireOnceNotABurst() {
        let clock = ManualClock()
        let o = onThread { () -> GridOutcome in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let t0 = clock.now()
            let fires = Recorder<LoopInstant>()
            let timer = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { _ in
                fires.append(clock.now())
            }
            loop.add(timer, forMode: .default)
            // Another handler keeps the loop busy past grid points +10, +20, +30.
            let busy = LoopSource { clock.advance(by: .milliseconds(35)) }
            loop.add(busy, forMode: .default)
            busy.signal()
            _ = loop.run(mode: .default, timeout: .zero)
            let first = fires.all, next = timer.fireDate
            _ = loop.run(mode: .default, timeout: .zero)  // a burst would fire the missed points here
            let again = fires.count
            clock.advance(to: t0 + .milliseconds(40))
            _ = loop.run(mode: .default, timeout: .zero)
            return GridOutcome(t0: t0, firstFires: first, nextAfterFirst: next,
                               firesAfterAnotherPassAtTheSameInstant: again, fires: fires.all, nextAtEnd: timer.fireDate)
        }
        #expect(o.firstFires == [o.t0 + .milliseconds(35)], "one fire, as soon as the loop is free")
        #expect(o.nextAfterFirst == o.t0 + .milliseconds(40), "then the next grid point in the future")
        #expect(o.firesAfterAnotherPassAtTheSameInstant == 1, "no catch-up burst")
        #expect(o.fires == [o.t0 + .milliseconds(35), o.t0 + .milliseconds(40)])
        #expect(o.nextAtEnd == o.t0 + .milliseconds(50))
    }

    @Test func R13_aHandlerThatOverranMovesToTheNextFutureGridPoint() {
        let clock = ManualClock()
        let o = onThread { () -> GridOutcome in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let t0 = clock.now()
            let fires = Recorder<LoopInstant>()
            let timer = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { _ in
                fires.append(clock.now())
                // The first call overruns past +20 and +30 ("missed bus").
                if fires.count == 1 { clock.advance(by: .milliseconds(25)) }
            }
            loop.add(timer, forMode: .default)
            clock.advance(by: .milliseconds(10))
            _ = loop.run(mode: .default, timeout: .zero)
            let first = fires.all, next = timer.fireDate
            _ = loop.run(mode: .default, timeout: .zero)
            let again = fires.count
            clock.advance(to: t0 + .milliseconds(40))
            _ = loop.run(mode: .default, timeout: .zero)
            return GridOutcome(t0: t0, firstFires: first, nextAfterFirst: next,
                               firesAfterAnotherPassAtTheSameInstant: again, fires: fires.all, nextAtEnd: timer.fireDate)
        }
        #expect(o.firstFires == [o.t0 + .milliseconds(10)])
        #expect(o.nextAfterFirst == o.t0 + .milliseconds(40), "next date computed after the handler returned")
        #expect(o.firesAfterAnotherPassAtTheSameInstant == 1)
        #expect(o.fires == [o.t0 + .milliseconds(10), o.t0 + .milliseconds(40)])
        #expect(o.nextAtEnd == o.t0 + .milliseconds(50))
    }

    @Test func R13_aLateFireKeepsTheGridNotTheFiringTime() {
        let clock = ManualClock()
        let (t0, dates) = onThread { () -> (LoopInstant, [LoopInstant?]) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let t0 = clock.now()
            let timer = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { _ in }
            loop.add(timer, forMode: .default)
            var dates: [LoopInstant?] = []
            for late in [13, 27, 30] {  // fire 3 ms late, then 7 ms late, then on time
                clock.advance(to: t0 + .milliseconds(late))
                _ = loop.run(mode: .default, timeout: .zero)
                dates.append(timer.fireDate)
            }
            return (t0, dates)
        }
        #expect(dates == [t0 + .milliseconds(20), t0 + .milliseconds(30), t0 + .milliseconds(40)])
    }

    // MARK: R14

    @Test func R14_toleranceNeverFiresEarlyAndOverlappingTimersShareOneWake() {
        let clock = ManualClock()
        let t0 = clock.now()
        let log = Recorder<String>()
        let fired = Recorder<(LoopInstant, LoopInstant)>()  // (fire date, clock at firing)
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r14-manual") { () -> Loop.RunResult in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            // A may fire in [+10, +60], B only at +15: their windows overlap.
            let a = LoopTimer(after: .milliseconds(10), tolerance: .milliseconds(50)) { t in
                log.append("A")
                fired.append((t.fireDate ?? .distantFuture, clock.now()))
            }
            let b = LoopTimer(after: .milliseconds(15)) { t in
                log.append("B")
                fired.append((t.fireDate ?? .distantFuture, clock.now()))
            }
            loop.add(a, forMode: .default)
            loop.add(b, forMode: .default)
            loop.add(activityLogger(log, [.beforeTimers, .afterWaiting]), forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10))
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        let wakes = loop.wakeUpCount
        clock.advance(by: .milliseconds(9))  // inside nobody's window yet
        #expect(eventually { loop.wakeUpCount > wakes && loop.isWaiting })
        #expect(log.all.filter { $0 == "A" || $0 == "B" }.isEmpty, "never before the fire date, tolerance or not")
        clock.advance(to: t0 + .milliseconds(15))
        #expect(worker.join() == .finished)
        let entries = log.all
        let lastWake = entries.lastIndex(of: "afterWaiting") ?? -1
        #expect(Array(entries[(lastWake + 1)...]) == ["A", "B"], "both fire after one wake, in one pass")
        for (date, at) in fired.all { #expect(at >= date) }
    }

    @Test func R14_overlappingWindowsShareOneWakeUpOnTheSystemClock() {
        // No time is asserted: only that the loop slept once and fired both
        // timers in the same pass. Without coalescing it would wake at A's
        // date and again at B's.
        let (log, result) = onThread { () -> ([String], Loop.RunResult) in
            let loop = Loop.current
            let log = Recorder<String>()
            let a = LoopTimer(after: .milliseconds(20), tolerance: .milliseconds(500)) { _ in log.append("A") }
            let b = LoopTimer(after: .milliseconds(60)) { _ in log.append("B") }
            loop.add(a, forMode: .default)
            loop.add(b, forMode: .default)
            loop.add(activityLogger(log, [.beforeTimers, .afterWaiting]), forMode: .default)
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return (log.all, result)
        }
        #expect(result == .finished)
        #expect(log == ["beforeTimers", "afterWaiting", "A", "B"])
    }

    @Test func R14_wakeInstantCoalescesWithinWindowsAndNeverWakesEarly() {
        func at(_ ms: UInt64) -> LoopInstant { LoopInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }
        func w(_ fire: UInt64, _ tol: Int64) -> (LoopInstant, Duration) { (at(fire), .milliseconds(tol)) }

        #expect(wakeInstant(windows: [], runDeadline: nil) == nil)
        #expect(wakeInstant(windows: [], runDeadline: at(7)) == at(7))
        #expect(wakeInstant(windows: [w(10, 50)], runDeadline: nil) == at(10), "a lone timer fires on time")
        #expect(wakeInstant(windows: [w(10, 50), w(15, 0)], runDeadline: nil) == at(15), "overlap: one wake at +15")
        #expect(wakeInstant(windows: [w(15, 0), w(10, 50)], runDeadline: nil) == at(15), "input order does not matter")
        #expect(wakeInstant(windows: [w(10, 4), w(15, 0)], runDeadline: nil) == at(10), "no overlap: first date")
        #expect(wakeInstant(windows: [w(10, 5), w(15, 0)], runDeadline: nil) == at(15), "window ends are inclusive")
        #expect(wakeInstant(windows: [w(10, 20), w(20, 20), w(25, 0), w(31, 0)], runDeadline: nil) == at(25),
                "every earlier window must contain the wake")
        #expect(wakeInstant(windows: [w(10, 50), w(15, 0)], runDeadline: at(12)) == at(12), "the deadline has no slack")
        #expect(wakeInstant(windows: [w(10, 50), w(15, 0)], runDeadline: at(40)) == at(15))

        // Against a brute-force reading of the rule on random windows: the
        // wake is the latest fire date inside the window of every timer due
        // at or before it, so nothing fires early or past its window.
        var rng = SplitMix64(seed: 14)
        for _ in 0..<500 {
            let windows = (0..<Int(rng.next() % 6 + 1)).map { _ in w(rng.next() % 100, Int64(rng.next() % 40)) }
            let wake = wakeInstant(windows: windows, runDeadline: nil)
            let reference = windows.map(\.0).filter { c in
                windows.allSatisfy { $0.0 > c || c <= $0.0.advanced(by: $0.1) }
            }.max()
            #expect(wake == reference, "windows: \(windows)")
            if let wake {
                #expect(wake >= windows.map(\.0).min()!)
                for (fire, tol) in windows where fire <= wake { #expect(wake <= fire.advanced(by: tol)) }
            }
        }
    }

    // MARK: R15

    @Test func R15_aOneShotTimerFiresOnceAndInvalidatesItself() {
        let clock = ManualClock()
        let o = onThread { () -> (Int, Bool, LoopInstant?, Bool, [Loop.RunResult]) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let fired = Counter()
            let timer = LoopTimer(after: .milliseconds(10)) { _ in fired.increment() }
            loop.add(timer, forMode: .default)
            clock.advance(by: .milliseconds(10))
            let r1 = boundedRun(loop)
            clock.advance(by: .seconds(1))
            loop.add(timer, forMode: .default)  // spent: adding it again does nothing
            let r2 = boundedRun(loop)
            return (fired.count, timer.isValid, timer.fireDate, loop.contains(timer, inMode: .default), [r1, r2])
        }
        #expect(o.0 == 1)
        #expect(!o.1)
        #expect(o.2 == nil)
        #expect(!o.3)
        #expect(o.4 == [.finished, .finished], "the spent timer left the mode, which is empty")
    }

    @Test func R15_anInvalidatedTimerNeverFiresAgain() {
        let clock = ManualClock()
        let (counts, validity) = onThread { () -> ([Int], [Bool]) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            loop.add(keepAlive(), forMode: .default)
            let early = Counter(), selfStopping = Counter()
            let invalidatedEarly = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { _ in
                early.increment()
            }
            let stopsItself = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { t in
                selfStopping.increment()
                if selfStopping.count == 2 { t.invalidate() }
            }
            loop.add(invalidatedEarly, forMode: .common)
            loop.add(stopsItself, forMode: .default)
            invalidatedEarly.invalidate()  // before it was ever due
            var counts: [Int] = []
            for _ in 0..<4 {
                clock.advance(by: .milliseconds(10))
                _ = loop.run(mode: .default, timeout: .zero)
                counts.append(early.count * 100 + selfStopping.count)
            }
            return (counts, [invalidatedEarly.isValid, stopsItself.isValid,
                             loop.contains(invalidatedEarly, inMode: .default), loop.contains(stopsItself, inMode: .default)])
        }
        #expect(counts == [1, 2, 2, 2])
        #expect(validity == [false, false, false, false])
    }
}

/// A small deterministic generator for property checks.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
