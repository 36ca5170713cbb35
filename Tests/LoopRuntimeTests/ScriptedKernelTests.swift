import Testing
@testable import LoopRuntime

/// Loops driven through their passes by a `ScriptedKernel`: the test says
/// what the kernel reports while the loop sleeps (a timer expiring, early or
/// on time, a descriptor becoming readable, another thread acting) and
/// checks what the loop asked of the kernel and what it ran. No descriptor
/// is opened and no real time passes.
@Suite struct ScriptedKernelTests {
    /// Milliseconds since `t0`, for readable expectations.
    private static func ms(_ instant: LoopInstant?, since t0: LoopInstant) -> Int64? {
        instant.map { Int64($0.duration(since: t0) / .milliseconds(1)) }
    }

    // MARK: R13, R14: timers

    @Test func R14_aTimerWithToleranceFiresInItsWindowAndNeverEarly() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let t0 = kernel.clock.now()
        // The kernel's timer goes off once a millisecond too early, then on time.
        kernel.script(.timerExpiresAt(t0 + .milliseconds(9)), .timerExpires)
        let (fired, result) = withScriptedLoop(kernel) { loop -> ([String], Loop.RunResult) in
            let fired = Recorder<String>()
            let clock = kernel.clock
            // A may fire in [+10, +60], B only at +15: one wake-up serves both.
            loop.add(LoopTimer(fireDate: t0 + .milliseconds(10), tolerance: .milliseconds(50)) { _ in
                fired.append("A at \(Self.ms(clock.now(), since: t0)!)")
            }, forMode: .default)
            loop.add(LoopTimer(fireDate: t0 + .milliseconds(15)) { _ in
                fired.append("B at \(Self.ms(clock.now(), since: t0)!)")
            }, forMode: .default)
            let result = loop.run(mode: .default, timeout: nil)
            return (fired.all, result)
        }
        #expect(kernel.waits.map { Self.ms($0, since: t0) } == [15, 15],
                "a wake-up inside both windows, asked for again after the early expiry")
        #expect(fired == ["A at 15", "B at 15"], "nothing at +9, both in one pass at +15")
        #expect(result == .finished)
        #expect(kernel.unusedSteps == 0)
    }

    @Test func R13_aLatePassFiresOnceAndCatchesUpOnTheGrid() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let t0 = kernel.clock.now()
        // The loop wakes late, past the grid points +10, +20 and +30; then on time.
        kernel.script(.timerExpiresAt(t0 + .milliseconds(35)), .timerExpires)
        let fired = withScriptedLoop(kernel) { loop -> [Int64] in
            let fired = Recorder<Int64>()
            let clock = kernel.clock
            loop.add(LoopTimer(fireDate: t0 + .milliseconds(10), interval: .milliseconds(10)) { timer in
                fired.append(Self.ms(clock.now(), since: t0)!)
                if fired.count == 2 { timer.invalidate() }
            }, forMode: .default)
            loop.run()
            return fired.all
        }
        #expect(fired == [35, 40], "once for the missed points, then on the grid")
        #expect(kernel.waits.map { Self.ms($0, since: t0) } == [10, 40])
    }

    @Test func R12_aTimerAHandlerAddsDueAtOnceFiresInTheNextPassOnAManualClock() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let t0 = kernel.clock.now()
        let fd: Int32 = 1001  // never opened: only the scripted kernel sees it
        let (fired, result) = withScriptedLoop(kernel) { loop -> ([Int64], Loop.RunResult) in
            let fired = Recorder<Int64>()
            let clock = kernel.clock
            // Time moves while the loop has no timer and no timeout; then a
            // handler adds a timer due at once. The pass after must see the
            // new time, not an older instant, or it sleeps on a clock that
            // never moves by itself.
            let source = LoopFileDescriptorSource(fileDescriptor: fd) { _ in
                loop.add(LoopTimer(after: .zero) { _ in fired.append(Self.ms(clock.now(), since: t0)!) },
                         forMode: .default)
            }
            loop.add(source, forMode: .default)
            kernel.script(.meanwhile { clock.advance(by: .milliseconds(10)) }, .readable(fd),
                          .meanwhile { loop.stop() })
            let result = loop.run(mode: .default, timeout: nil)
            source.invalidate()
            return (fired.all, result)
        }
        #expect(fired == [10])
        #expect(kernel.waits == [nil, nil, nil], "it never slept until a date already past")
        #expect(result == .stopped)
        #expect(kernel.unusedSteps == 0)
    }

    /// R6: a timer taken out of one of its modes no longer wakes a run of
    /// that mode, though its schedule, and the stale entry that mode still
    /// holds, live on in the other. (The run just before looked at it as
    /// that mode's earliest timer: a remembered answer must not outlive
    /// the removal.)
    @Test func R6_aTimerRemovedFromOneOfItsModesNoLongerWakesThatMode() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let t0 = kernel.clock.now()
        kernel.script(.timerExpires, .timerExpires, .timerExpires)
        let fired = withScriptedLoop(kernel) { loop -> [String] in
            let fired = Recorder<String>()
            let clock = kernel.clock
            let a: Loop.Mode = "r6-removed-a", b: Loop.Mode = "r6-removed-b"
            let timer = LoopTimer(fireDate: t0 + .milliseconds(10), interval: .milliseconds(10)) { _ in
                fired.append("\(modeName(loop)) at \(Self.ms(clock.now(), since: t0)!)")
            }
            loop.add(keepAlive(), forMode: a)
            loop.add(timer, forMode: a)
            loop.add(timer, forMode: b)
            _ = loop.run(mode: a, timeout: .milliseconds(15))  // fires at +10, due again at +20 in both modes
            loop.remove(timer, forMode: a)
            _ = loop.run(mode: a, timeout: .milliseconds(30))
            _ = loop.run(mode: b, timeout: .zero)
            timer.invalidate()
            return fired.all
        }
        #expect(kernel.waits.map { Self.ms($0, since: t0) } == [10, 15, 45],
                "the run of the mode it left sleeps to its timeout, not to the timer's +20")
        #expect(fired == ["r6-removed-a at 10", "r6-removed-b at 45"])
        #expect(kernel.unusedSteps == 0)
    }

    // MARK: R19: the sleep handshake

    @Test func R19_aBlockQueuedFromAnotherThreadAsTheLoopDecidesToSleepKeepsItAwake() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let (waitsBeforeTheBlock, result) = withScriptedLoop(kernel) { loop -> (Int?, Loop.RunResult) in
            let waitsSeen = Slot<Int>()
            loop.add(keepAlive(), forMode: .default)
            // beforeWaiting is the last thing a pass does before its sleep
            // decision: another thread queues a block right then.
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false) { _, _ in
                _ = TestThread("r19-perform") {
                    loop.perform { waitsSeen.set(kernel.waits.count) }
                }.join()
            }, forMode: .default)
            kernel.script(.meanwhile { loop.stop() })
            let result = loop.run(mode: .default, timeout: nil)
            return (waitsSeen.value, result)
        }
        #expect(waitsBeforeTheBlock == 0, "the block ran before the loop ever blocked")
        #expect(kernel.waits == [nil], "then it slept, until stopped")
        #expect(result == .stopped)
    }

    @Test func R19_aWakeUpFromAnotherThreadOnceTheLoopIsAsleepEndsTheWait() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let (log, result) = withScriptedLoop(kernel) { loop -> ([String], Loop.RunResult) in
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            loop.add(activityLogger(log, .afterWaiting), forMode: .default)
            kernel.script(.meanwhile { loop.perform { log.append("block") } }, .meanwhile { loop.stop() })
            let result = loop.run(mode: .default, timeout: nil)
            return (log.all, result)
        }
        #expect(log == ["afterWaiting", "block", "afterWaiting"], "each write of the wake-up ended one wait")
        #expect(kernel.waits == [nil, nil])
        #expect(result == .stopped)
        #expect(kernel.unusedSteps == 0)
    }

    // MARK: R17, R20: the run's timeout and the decision to block

    @Test func R20_aRunWithATimeoutReturnsTimedOutAtTheScriptedInstant() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let t0 = kernel.clock.now()
        kernel.script(.timerExpiresAt(t0 + .milliseconds(49)), .timerExpires)
        let (result, end) = withScriptedLoop(kernel) { loop -> (Loop.RunResult, LoopInstant) in
            loop.add(keepAlive(), forMode: .default)
            let result = loop.run(mode: .default, timeout: .milliseconds(50))
            return (result, kernel.clock.now())
        }
        #expect(result == .timedOut)
        #expect(Self.ms(end, since: t0) == 50, "not at +49, when the timer went off early")
        #expect(kernel.waits.map { Self.ms($0, since: t0) } == [50, 50])
    }

    @Test func R17_aHandlerThatOverranTheTimeoutEndsTheRunAsItsPassEnds() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let t0 = kernel.clock.now()
        let fd: Int32 = 1000  // never opened: only the scripted kernel sees it
        kernel.script(.readable(fd))
        let (handled, result) = withScriptedLoop(kernel) { loop -> (Int, Loop.RunResult) in
            let handled = Counter()
            let source = LoopFileDescriptorSource(fileDescriptor: fd) { _ in
                handled.increment()
                kernel.clock.advance(by: .milliseconds(80))  // past the run's timeout
            }
            loop.add(source, forMode: .default)
            let result = loop.run(mode: .default, timeout: .milliseconds(50))
            source.invalidate()
            return (handled.count, result)
        }
        #expect(handled == 1)
        #expect(result == .timedOut)
        // As CF: the pass whose handler overran is the last; no further look at the kernel.
        #expect(kernel.calls == [.wait(until: t0 + .milliseconds(50))])
    }

    @Test func R17_aPassThatHandledASourceOnlyLooksAndDoesNotNotifyBeforeWaiting() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let (log, result) = withScriptedLoop(kernel) { loop -> ([String], Loop.RunResult) in
            let log = Recorder<String>()
            let source = LoopSource { log.append("source") }
            loop.add(source, forMode: .default)
            loop.add(activityLogger(log, [.beforeTimers, .beforeWaiting]), forMode: .default)
            source.signal()
            kernel.script(.meanwhile { loop.stop() })
            let result = loop.run(mode: .default, timeout: nil)
            return (log.all, result)
        }
        #expect(log == ["beforeTimers", "source", "beforeTimers", "beforeWaiting"],
                "beforeWaiting only in the pass after the one that handled the source")
        // The first pass only looked; the second looked for ready descriptors
        // (step 5, for the waiting observer), then slept.
        #expect(kernel.calls == [.poll, .poll, .wait(until: nil)])
        #expect(result == .stopped)
    }
}
