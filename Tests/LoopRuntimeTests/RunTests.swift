#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import LoopRuntime

/// R19–R22: what wakes a sleeping loop, how runs end, nesting, and why
/// removing sources is no way to stop a loop.
@Suite struct RunTests {
    /// Starts a thread whose loop runs `mode` once (10 s timeout) after
    /// `setup`; returns the thread and its loop.
    private func runningLoop(_ name: String, mode: Loop.Mode = .default,
                             returnAfterSourceHandled: Bool = false,
                             setup: @escaping @Sendable (Loop) -> Void = { _ in })
        -> (TestThread<Loop.RunResult>, Loop) {
        let loopSlot = Slot<Loop>()
        let thread = TestThread(name) { () -> Loop.RunResult in
            let loop = Loop.current
            setup(loop)
            loopSlot.set(loop)
            return loop.run(mode: mode, timeout: .seconds(10), returnAfterSourceHandled: returnAfterSourceHandled)
        }
        return (thread, loopSlot.wait()!)
    }

    // MARK: R19

    @Test func R19_performingABlockWakesASleepingLoop() {
        let (worker, loop) = runningLoop("r19-block") { $0.add(keepAlive(), forMode: .default) }
        #expect(waitUntilSleeping(loop))
        let onLoopThread = Slot<Bool>()
        loop.perform(inModes: [.default]) {
            onLoopThread.set(loop.isCurrentThread)
            loop.stop()
        }
        #expect(worker.join() == .stopped, "the block ran without another event to wake the loop")
        #expect(onLoopThread.value == true)
    }

    @Test func R19_addingASignalledSourceWakesASleepingLoop() {
        let (worker, loop) = runningLoop("r19-source", returnAfterSourceHandled: true) {
            $0.add(keepAlive(), forMode: .default)
        }
        #expect(waitUntilSleeping(loop))
        let fired = Counter()
        let source = LoopSource { fired.increment() }
        source.signal()
        loop.add(source, forMode: .default)  // no wakeUp(): adding it wakes the loop
        #expect(worker.join() == .handledSource)
        #expect(fired.count == 1)
    }

    @Test func R19_wakeUpWakesASleepingLoop() {
        let (worker, loop) = runningLoop("r19-wake") { loop in
            loop.add(keepAlive(), forMode: .default)
            loop.add(LoopObserver(activities: .afterWaiting) { _, _ in loop.stop() }, forMode: .default)
        }
        #expect(waitUntilSleeping(loop))
        let wakes = loop.wakeUpCount
        loop.wakeUp()
        #expect(worker.join() == .stopped)
        #expect(loop.wakeUpCount == wakes + 1)
    }

    @Test func R19_wakeUpWhileAwakeMakesTheNextWaitReturnAtOnce() {
        let result = onThread { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(keepAlive(), forMode: .default)
            loop.add(LoopObserver(activities: .afterWaiting) { _, _ in loop.stop() }, forMode: .default)
            loop.wakeUp()  // not running: remembered for the next wait
            return loop.run(mode: .default, timeout: .seconds(10))
        }
        #expect(result == .stopped)
    }

    /// Regression: a wake-up eventfd write that lands after the loop already
    /// woke (the waker flips "signalled" under the lock, writes after it)
    /// used never to be drained, so every later wait returned at once.
    @Test func R19_aLateWakeUpWriteDoesNotLeaveTheLoopSpinning() {
        let (worker, loop) = runningLoop("r19-late") { loop in
            loop.add(keepAlive(), forMode: .default)
            loop.backend.wake()  // what a late writer leaves behind: a write of the wake-up eventfd
        }
        // The first wait returns at once for that write (one wake-up); the
        // loop must then sleep again and stay asleep. (Waiting only for
        // `isWaiting` could catch the first wait before it returned.)
        #expect(eventually { loop.wakeUpCount >= 1 && loop.isWaiting })
        #expect(loopStaysAsleep(loop))
        loop.stop()
        #expect(worker.join() == .stopped)
    }

    /// Regression: on a manual clock, a wait that turned into a poll (a timer
    /// already due) left the loop marked as sleeping, so a wakeUp() during
    /// the next handler wrote the eventfd and the loop spun.
    @Test func R19_aWakeUpDuringAHandlerAfterAPollDoesNotLeaveTheLoopSpinning() {
        let clock = ManualClock()
        let inHandler = Flag(), wokeUp = Flag()
        let (worker, loop) = runningLoop("r19-poll") { loop in
            useManualClock(clock, on: loop)
            loop.add(keepAlive(), forMode: .default)
            loop.add(LoopTimer(after: .zero) { _ in
                inHandler.open()
                wokeUp.wait()
            }, forMode: .default)
        }
        #expect(inHandler.wait())
        loop.wakeUp()  // from another thread, while the loop is awake in the handler
        wokeUp.open()
        #expect(waitUntilSleeping(loop))
        #expect(loopStaysAsleep(loop))
        loop.stop()
        #expect(worker.join() == .stopped)
    }

    /// Whether `loop`, asleep, stays asleep for a moment with nothing to do.
    /// (A negative check: the pause only gives a spinning loop time to show
    /// itself; a correct loop passes however long it is.)
    private func loopStaysAsleep(_ loop: Loop) -> Bool {
        let wakes = loop.wakeUpCount
        usleep(100_000)
        return loop.wakeUpCount == wakes && loop.isWaiting
    }

    // MARK: R20

    @Test func R20_runWithNoModeRunsTheDefaultModeUntilStopped() {
        let log = Recorder<String>()
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r20-run") { () -> Bool in
            let loop = Loop.current
            loop.add(keepAlive(), forMode: .default)
            loop.add(activityLogger(log, [.entry, .exit]), forMode: .default)
            loopSlot.set(loop)
            loop.run()
            return true
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        let mode = Slot<Loop.Mode>()
        loop.perform(inModes: [.default]) { mode.set(loop.currentMode ?? "none") }
        #expect(mode.wait() == .default)
        loop.stop()
        #expect(worker.join() == true)
        #expect(log.all == ["entry", "exit"])
    }

    @Test func R20_runWithNoModeReturnsWhenTheModeFinishes() {
        let fired = onThread { () -> Int in
            let loop = Loop.current
            let fired = Counter()
            loop.add(LoopTimer(after: .zero) { _ in fired.increment() }, forMode: .default)
            withWatchdog(loop) { loop.run() }  // returns once the one-shot timer is spent
            return fired.count
        }
        #expect(fired == 1)
    }

    @Test func R20_aRunWithATimeoutReturnsTimedOut() {
        let result = onThread { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(keepAlive(), forMode: .default)
            return loop.run(mode: .default, timeout: .milliseconds(20))
        }
        #expect(result == .timedOut)
    }

    @Test func R20_stopFromAnotherThreadEndsTheRunAfterItsNotifications() {
        let log = Recorder<String>()
        let (worker, loop) = runningLoop("r20-stop") { loop in
            loop.add(keepAlive(), forMode: .default)
            loop.add(activityLogger(log), forMode: .default)
        }
        #expect(waitUntilSleeping(loop))
        loop.stop()
        #expect(worker.join() == .stopped)
        #expect(log.all == ["entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "exit"])
    }

    @Test func R20_stopOnALoopThatIsNotRunningDoesNothing() {
        // CF: CFRunLoopStop on an idle loop marks no run; the next run times out.
        let (result, log) = onThread { () -> (Loop.RunResult, [String]) in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            loop.add(activityLogger(log, [.entry, .exit]), forMode: .default)
            loop.stop()
            return (loop.run(mode: .default, timeout: .milliseconds(20)), log.all)
        }
        #expect(result == .timedOut, "the stop was aimed at no run, so the run after it is not stopped")
        #expect(log == ["entry", "exit"])
    }

    @Test func R20_aStopFromAnEntryObserverEndsTheRunAtOnce() {
        let (result, log) = onThread { () -> (Loop.RunResult, [String]) in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            loop.add(activityLogger(log), forMode: .default)
            loop.add(LoopObserver(activities: .entry) { _, _ in loop.stop() }, forMode: .default)
            return (loop.run(mode: .default, timeout: .seconds(10)), log.all)
        }
        #expect(result == .stopped, "the run was in progress when the observer stopped it")
        #expect(log == ["entry", "exit"], "no pass runs; exit is still sent")
    }

    @Test func R20_R21_aStopBelongsToTheRunInProgressNotToARunNestedAfterIt() {
        // CF: the handler's stop marks the outer run; the nested run has its
        // own per-run flag and times out; the outer run then returns stopped.
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            let handler = LoopSource {
                loop.stop()
                log.append("nested \(loop.run(mode: .default, timeout: .milliseconds(20)))")
            }
            loop.add(handler, forMode: .default)
            handler.signal()
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.log == ["nested timedOut"])
        #expect(o.result == .stopped)
    }

    @Test func R20_R21_stopInsideTheInnermostOfThreeRunsEndsOnlyThatRun() {
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            let third = LoopSource {
                log.append("third run: stop")
                loop.stop()
            }
            let second = LoopSource {
                third.signal()
                log.append("third \(loop.run(mode: .default, timeout: .seconds(10)))")
            }
            let first = LoopSource {
                second.signal()
                log.append("second \(loop.run(mode: .default, timeout: .milliseconds(20)))")
                loop.stop()
            }
            for s in [first, second, third] { loop.add(s, forMode: .default) }
            first.signal()
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.log == ["third run: stop", "third stopped", "second timedOut"],
                "the second run outlives the third's stop and ends at its own timeout")
        #expect(o.result == .stopped)
    }

    // MARK: R21

    struct NestOutcome: Sendable {
        var log: [String]
        var result: Loop.RunResult
    }

    @Test func R21_aHandlerMayRunTheLoopInAnotherModeAndTheOuterRunResumes() {
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let inner: Loop.Mode = "r21-inner"
            let log = Recorder<String>()
            let observer = LoopObserver(activities: [.entry, .exit]) { _, activity in
                log.append("\(activity) \(modeName(loop))")
            }
            loop.add(observer, forMode: .default)
            loop.add(observer, forMode: inner)
            let innerSource = LoopSource { log.append("inner source in \(modeName(loop))") }
            loop.add(innerSource, forMode: inner)
            let later = LoopSource {
                log.append("later source in \(modeName(loop))")
                loop.stop()
            }
            loop.add(later, forMode: .default)
            let outer = LoopSource {
                log.append("outer handler begins in \(modeName(loop))")
                innerSource.signal()
                let r = loop.run(mode: inner, timeout: .seconds(10), returnAfterSourceHandled: true)
                log.append("inner run returned \(r); back in \(modeName(loop))")
                later.signal()  // handled by the outer run, which resumes
            }
            loop.add(outer, forMode: .default)
            outer.signal()
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.result == .stopped)
        #expect(o.log == [
            "entry \(Loop.Mode.default)",
            "outer handler begins in \(Loop.Mode.default)",
            "entry r21-inner",
            "inner source in r21-inner",
            "exit r21-inner",
            "inner run returned handledSource; back in \(Loop.Mode.default)",
            "later source in \(Loop.Mode.default)",
            "exit \(Loop.Mode.default)",
        ])
    }

    @Test func R21_aHandlerMayRunTheLoopInTheOuterRunsOwnMode() {
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(activityLogger(log, [.entry, .exit]), forMode: .default)
            let second = LoopSource { log.append("second") }
            let first = LoopSource {
                log.append("first begins")
                second.signal()
                let r = loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
                log.append("nested \(r)")
            }
            loop.add(first, forMode: .default)
            loop.add(second, forMode: .default)
            first.signal()
            let result = loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.result == .handledSource)
        #expect(o.log == ["entry", "first begins", "entry", "second", "exit", "nested handledSource", "exit"])
    }

    @Test func R21_stopEndsOnlyTheInnermostRun() {
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            loop.add(keepAlive(), forMode: "r21-stop-inner")
            let outer = LoopSource {
                loop.perform(inModes: ["r21-stop-inner"]) { loop.stop() }
                let r = loop.run(mode: "r21-stop-inner", timeout: .seconds(10))
                log.append("inner \(r)")
                loop.perform(inModes: [.default]) { log.append("outer still running") }
            }
            loop.add(outer, forMode: .default)
            outer.signal()
            // The outer run is not stopped; it ends at its timeout.
            let result = loop.run(mode: .default, timeout: .milliseconds(50))
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.log == ["inner stopped", "outer still running"])
        #expect(o.result == .timedOut)
    }

    // A pass that finds blocks queued when it decides whether to sleep takes
    // them there and runs them at step 10 (R17), without looking at the
    // queue again. A run nested in between (here from afterWaiting) must
    // still run them first, and count them as work: a mode with no sources
    // or timers but with such a block is not empty (R3).

    @Test func R21_aNestedRunRunsTheBlocksTheOuterSleepDecisionTookBeforeNewerOnes() {
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(keepAlive(), forMode: .default)
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false) { _, _ in
                loop.perform { log.append("A, queued before the sleep decision") }
            }, forMode: .default)
            loop.add(LoopObserver(activities: .afterWaiting, repeats: false) { _, _ in
                loop.perform { log.append("B, queued after it") }
                log.append("nested \(loop.run(mode: .default, timeout: .zero))")
                loop.stop()
            }, forMode: .default)
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.log == ["A, queued before the sleep decision", "B, queued after it", "nested timedOut"])
        #expect(o.result == .stopped)
    }

    @Test func R21_R3_aNestedRunOfAnEmptyModeRunsItsBlockThatTheOuterSleepDecisionTook() {
        let o = onThread { () -> NestOutcome in
            let loop = Loop.current
            let log = Recorder<String>()
            let other: Loop.Mode = "r21-carried"
            loop.add(keepAlive(), forMode: .default)
            // Observers only: the mode exists but has no sources or timers (R3).
            loop.add(activityLogger(log, .entry), forMode: other)
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false) { _, _ in
                loop.perform { log.append("A in \(modeName(loop))") }
                loop.perform(inModes: [other]) {
                    log.append("C in \(modeName(loop))")
                    loop.stop()
                }
            }, forMode: .default)
            loop.add(LoopObserver(activities: .afterWaiting, repeats: false) { _, _ in
                log.append("\(other) run \(loop.run(mode: other, timeout: .seconds(10)))")
                loop.stop()
            }, forMode: .default)
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return NestOutcome(log: log.all, result: result)
        }
        #expect(o.log == ["entry", "C in r21-carried", "r21-carried run stopped", "A in \(Loop.Mode.default)"])
        #expect(o.result == .stopped)
    }

    // MARK: R22

    @Test func R22_removingYourSourcesDoesNotStopALoopThatSomethingElseKeepsAlive() {
        let mine = LoopSource {}
        let someoneElses = LoopPort { _ in }  // added by code the caller does not know
        let (worker, loop) = runningLoop("r22") { loop in
            loop.add(mine, forMode: .default)
            loop.add(someoneElses, forMode: .default)
        }
        #expect(waitUntilSleeping(loop))
        loop.remove(mine, forMode: .default)
        let wakes = loop.wakeUpCount
        loop.wakeUp()  // let it look at its modes again
        #expect(eventually { loop.wakeUpCount > wakes && loop.isWaiting })
        #expect(loop.currentMode == .default, "the run goes on: the mode is not empty")
        #expect(!worker.isFinished)
        loop.stop()
        #expect(worker.join() == .stopped, "stop() is the reliable way")
    }

    @Test func R22_aTimeoutEndsARunWhateverTheModeHolds() {
        let result = onThread { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(LoopPort { _ in }, forMode: .default)
            loop.add(LoopSource {}, forMode: .default)
            return loop.run(mode: .default, timeout: .milliseconds(20))
        }
        #expect(result == .timedOut)
    }
}
