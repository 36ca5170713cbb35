import Testing
@testable import LoopRuntime

/// R16–R18: observers, the exact sequence of one run, and notifications
/// that precede the events they announce.
@Suite struct ObserverTests {
    // MARK: R16

    @Test func R16_anObserverIsCalledForEachActivityItRegisteredForAndNoOther() {
        let clock = ManualClock()
        let (some, all) = onThread { () -> ([String], [String]) in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let some = Recorder<String>(), all = Recorder<String>()
            loop.add(activityLogger(some, [.entry, .beforeWaiting, .exit]), forMode: .default)
            loop.add(activityLogger(all), forMode: .default)
            loop.add(LoopTimer(after: .zero) { _ in }, forMode: .default)
            _ = boundedRun(loop)
            return (some.all, all.all)
        }
        #expect(some == ["entry", "beforeWaiting", "exit"])
        #expect(all == ["entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "exit"])
    }

    @Test func R16_lowerOrderIsCalledFirst() {
        let log = onThread { () -> [String] in
            let loop = Loop.current
            let log = Recorder<String>()
            for (order, label) in [(3, "3"), (-2, "-2"), (1, "1a"), (1, "1b")] {
                let o = LoopObserver(activities: [.entry, .exit], order: order) { _, activity in
                    log.append("\(label) \(activity)")
                }
                loop.add(o, forMode: .default)
            }
            loop.add(keepAlive(), forMode: .default)
            _ = loop.run(mode: .default, timeout: .zero)
            return log.all
        }
        #expect(log == ["-2 entry", "1a entry", "1b entry", "3 entry", "-2 exit", "1a exit", "1b exit", "3 exit"])
    }

    @Test func R16_aOneShotObserverInvalidatesItselfAfterItsFirstCall() {
        let (calls, valid, inModes) = onThread { () -> ([String], Bool, [Bool]) in
            let loop = Loop.current
            let calls = Recorder<String>()
            let once = LoopObserver(activities: .all, repeats: false) { _, activity in calls.append(activityName(activity)) }
            loop.add(once, forMode: .default)
            loop.add(once, forMode: "r16-other")
            loop.add(keepAlive(), forMode: .default)
            loop.add(keepAlive(), forMode: "r16-other")
            _ = loop.run(mode: .default, timeout: .zero)
            _ = loop.run(mode: "r16-other", timeout: .zero)
            return (calls.all, once.isValid, [loop.contains(once, inMode: .default), loop.contains(once, inMode: "r16-other")])
        }
        #expect(calls == ["entry"])
        #expect(!valid)
        #expect(inModes == [false, false])
    }

    // MARK: R17

    @Test func R17_aRunThatSleepsUntilATimerFollowsTheSequence() {
        let clock = ManualClock()
        let log = Recorder<String>()
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r17-sleep") { () -> Loop.RunResult in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            loop.add(activityLogger(log), forMode: .default)
            loop.add(LoopTimer(after: .milliseconds(10)) { _ in log.append("timer") }, forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10))
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        clock.advance(by: .milliseconds(10))
        #expect(worker.join() == .finished, "the one-shot timer was the mode's last item")
        #expect(log.all == ["entry", "beforeTimers", "beforeSources", "beforeWaiting",
                            "afterWaiting", "timer", "exit"])
    }

    @Test func R17_aPassThatHandledASourceSkipsBeforeWaiting() {
        let clock = ManualClock()
        let log = Recorder<String>()
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r17-source") { () -> Loop.RunResult in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            loop.add(activityLogger(log), forMode: .default)
            let source = LoopSource { log.append("source") }
            loop.add(source, forMode: .default)
            loop.add(LoopTimer(after: .milliseconds(10)) { _ in
                log.append("timer")
                loop.stop()
            }, forMode: .default)
            loop.perform(inModes: [.default]) { log.append("block") }
            source.signal()
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10))
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        clock.advance(by: .milliseconds(10))
        #expect(worker.join() == .stopped)
        #expect(log.all == [
            "entry",
            "beforeTimers", "beforeSources", "block", "source",         // pass 1: a source ran, no sleep
            "beforeTimers", "beforeSources", "beforeWaiting",           // pass 2: nothing to do, sleep
            "afterWaiting", "timer",                                    // woken by the timer
            "exit",
        ])
    }

    @Test func R17_aPortAlreadyReadyIsHandledWithoutTheWaitingNotifications() {
        let (log, result) = onThread { () -> ([String], Loop.RunResult) in
            let loop = Loop.current
            let log = Recorder<String>()
            loop.add(activityLogger(log), forMode: .default)
            let port = LoopPort { m in log.append("port \(m.id)") }
            loop.add(port, forMode: .default)
            port.send(id: 9)
            let result = loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
            return (log.all, result)
        }
        #expect(result == .handledSource)
        #expect(log == ["entry", "beforeTimers", "beforeSources", "port 9", "exit"])
    }

    @Test func R17_aRunThatTimesOutFollowsTheSequence() {
        let clock = ManualClock()
        let log = Recorder<String>()
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r17-timeout") { () -> Loop.RunResult in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            loop.add(activityLogger(log), forMode: .default)
            loop.add(keepAlive(), forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .milliseconds(50))
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        clock.advance(by: .milliseconds(50))
        #expect(worker.join() == .timedOut)
        #expect(log.all == ["entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "exit"])
    }

    // MARK: R18

    @Test func R18_notificationsPrecedeTheEventsAndTheGapIsReal() {
        let clock = ManualClock()
        let t0 = clock.now()
        let log = Recorder<String>()
        let times = Recorder<LoopInstant>()
        let loopSlot = Slot<Loop>()
        let source = LoopSource {
            log.append("source")
            times.append(clock.now())
            loopSlot.value?.stop()
        }
        let worker = TestThread("r18") { () -> Loop.RunResult in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            loop.add(LoopObserver(activities: .all) { _, activity in
                log.append(activityName(activity))
                times.append(clock.now())
            }, forMode: .default)
            loop.add(LoopTimer(after: .milliseconds(10)) { _ in
                log.append("timer")
                times.append(clock.now())
            }, forMode: .default)
            loop.add(source, forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10))
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        clock.advance(by: .milliseconds(10))
        #expect(eventually { log.all.contains("timer") && loop.isWaiting })
        source.signal()
        loop.wakeUp()
        #expect(worker.join() == .stopped)
        let entries = Array(zip(log.all, times.all))
        #expect(entries.map(\.0) == [
            "entry", "beforeTimers", "beforeSources", "beforeWaiting",
            "afterWaiting", "timer",
            "beforeTimers", "beforeSources", "beforeWaiting",
            "afterWaiting",
            "beforeTimers", "beforeSources", "source",
            "exit",
        ])
        // beforeTimers announced the timer at +0; it fired at +10, after the
        // loop slept: only afterWaiting marks the event's real time.
        let at = Dictionary(entries.enumerated().map { ($0.offset, $0.element.1) }, uniquingKeysWith: { a, _ in a })
        #expect(at[1] == t0 && at[5] == t0 + .milliseconds(10))
        #expect(at[4] == at[5], "afterWaiting is stamped with the event's time")
    }
}
