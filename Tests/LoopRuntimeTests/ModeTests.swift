import Testing
@testable import LoopRuntime

/// R4–R7: a run watches one mode; other modes' events wait; adding twice is
/// a no-op; the common modes share the common items.
@Suite struct ModeTests {
    // MARK: R4

    struct R4Outcome: Sendable {
        var first: Loop.RunResult, second: Loop.RunResult
        var firedAfterFirst: [String], fired: [String]
        var bStillSignalledAfterFirst: Bool
        var logAAfterFirst: [String], logBAfterFirst: [String], logB: [String]
        var modeAfterRuns: Loop.Mode?
    }

    @Test func R4_aRunWatchesAndNotifiesOnlyItsOwnMode() {
        let o = onThread { () -> R4Outcome in
            let loop = Loop.current
            let a: Loop.Mode = "r4-a", b: Loop.Mode = "r4-b"
            let fired = Recorder<String>(), logA = Recorder<String>(), logB = Recorder<String>()
            loop.add(activityLogger(logA), forMode: a)
            loop.add(activityLogger(logB), forMode: b)
            let srcA = LoopSource { fired.append("a in \(loop.currentMode?.rawValue ?? "none")") }
            let srcB = LoopSource { fired.append("b in \(loop.currentMode?.rawValue ?? "none")") }
            loop.add(srcA, forMode: a)
            loop.add(srcB, forMode: b)
            srcA.signal()
            srcB.signal()
            let first = loop.run(mode: a, timeout: .seconds(10), returnAfterSourceHandled: true)
            let firedAfterFirst = fired.all, bSignalled = srcB.isSignalled
            let logAAfterFirst = logA.all, logBAfterFirst = logB.all
            // To change mode the run returns and a new one starts.
            let second = loop.run(mode: b, timeout: .seconds(10), returnAfterSourceHandled: true)
            return R4Outcome(first: first, second: second, firedAfterFirst: firedAfterFirst, fired: fired.all,
                             bStillSignalledAfterFirst: bSignalled, logAAfterFirst: logAAfterFirst,
                             logBAfterFirst: logBAfterFirst, logB: logB.all, modeAfterRuns: loop.currentMode)
        }
        #expect(o.first == .handledSource)
        #expect(o.firedAfterFirst == ["a in r4-a"], "only the running mode's source fires")
        #expect(o.bStillSignalledAfterFirst)
        #expect(o.logAAfterFirst.first == "entry" && o.logAAfterFirst.last == "exit")
        #expect(o.logBAfterFirst.isEmpty, "observers of other modes are not notified")
        #expect(o.second == .handledSource)
        #expect(o.fired == ["a in r4-a", "b in r4-b"])
        #expect(o.logB.first == "entry" && o.logB.last == "exit")
        #expect(o.modeAfterRuns == nil)
    }

    // MARK: R5

    @Test func R5_aSignalledSourceOfAnotherModeWaitsForItsMode() {
        let (counts, result) = onThread { () -> ([Int], Loop.RunResult) in
            let loop = Loop.current
            let fired = Counter()
            let held = LoopSource { fired.increment() }
            loop.add(held, forMode: "r5-held")
            loop.add(keepAlive(), forMode: "r5-busy")
            held.signal()
            var counts: [Int] = []
            for _ in 0..<3 {
                _ = loop.run(mode: "r5-busy", timeout: .zero)
                counts.append(fired.count)
            }
            let result = loop.run(mode: "r5-held", timeout: .seconds(10), returnAfterSourceHandled: true)
            counts.append(fired.count)
            return (counts, result)
        }
        #expect(counts == [0, 0, 0, 1])
        #expect(result == .handledSource)
    }

    struct R5PortOutcome: Sendable {
        var defaultResult: Loop.RunResult
        var receivedDuringDefault: [LoopMessage]
        var pendingDuringDefault: Int
        var portResult: Loop.RunResult
        var received: [LoopMessage]
    }

    @Test func R5_aPortMessageOutsideTheRunningModeIsHeldNotDropped() {
        let portMode: Loop.Mode = "r5-port"
        let received = Recorder<LoopMessage>()
        let port = LoopPort { received.append($0) }
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r5-port") { () -> R5PortOutcome in
            let loop = Loop.current
            loop.add(keepAlive(), forMode: .default)
            loop.add(port, forMode: portMode)
            loopSlot.set(loop)
            let defaultResult = loop.run(mode: .default, timeout: .seconds(10))
            let during = received.all, pending = port.pendingCount
            let portResult = loop.run(mode: portMode, timeout: .seconds(10), returnAfterSourceHandled: true)
            return R5PortOutcome(defaultResult: defaultResult, receivedDuringDefault: during,
                                 pendingDuringDefault: pending, portResult: portResult, received: received.all)
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        port.send(id: 5, payload: [1, 2, 3])
        // One more pass in the default mode, after the port became readable:
        // a port watched outside its mode would be handled in it.
        let passed = Flag()
        loop.perform(inModes: [.default]) { passed.open() }
        #expect(passed.wait())
        loop.stop()
        let o = worker.join()
        #expect(o?.defaultResult == .stopped)
        #expect(o?.receivedDuringDefault == [], "the port is not watched outside its mode")
        #expect(o?.pendingDuringDefault == 1, "its message is held, not dropped")
        #expect(o?.portResult == .handledSource)
        #expect(o?.received == [LoopMessage(id: 5, payload: [1, 2, 3])])
    }

    // MARK: R6

    @Test func R6_addingAnItemTwiceHasNoEffect() {
        let o = onThread { () -> [String: Int] in
            let loop = Loop.current
            let schedules = Counter(), cancels = Counter(), fired = Counter(), entries = Counter()
            let source = LoopSource(schedule: { _, _ in schedules.increment() },
                                    cancel: { _, _ in cancels.increment() },
                                    perform: { fired.increment() })
            loop.add(source, forMode: .default)
            loop.add(source, forMode: .default)
            let observer = LoopObserver(activities: .entry) { _, _ in entries.increment() }
            loop.add(observer, forMode: .default)
            loop.add(observer, forMode: .default)
            let timer = LoopTimer(after: .seconds(3600)) { _ in }
            loop.add(timer, forMode: .default)
            loop.add(timer, forMode: .default)
            source.signal()
            _ = loop.run(mode: .default, timeout: .zero)
            // One removal undoes one addition made twice.
            loop.remove(source, forMode: .default)
            loop.remove(observer, forMode: .default)
            loop.remove(timer, forMode: .default)
            return [
                "schedules": schedules.count, "cancels": cancels.count, "fired": fired.count, "entries": entries.count,
                "sourceLeft": loop.contains(source, inMode: .default) ? 1 : 0,
                "observerLeft": loop.contains(observer, inMode: .default) ? 1 : 0,
                "timerLeft": loop.contains(timer, inMode: .default) ? 1 : 0,
            ]
        }
        #expect(o == ["schedules": 1, "cancels": 1, "fired": 1, "entries": 1,
                      "sourceLeft": 0, "observerLeft": 0, "timerLeft": 0])
    }

    @Test func R6_oneItemMayBeInSeveralModes() {
        let clock = ManualClock()
        let o = onThread { () -> [String] in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let a: Loop.Mode = "r6-a", b: Loop.Mode = "r6-b"
            let log = Recorder<String>()
            let source = LoopSource { log.append("source in \(modeName(loop))") }
            let timer = LoopTimer(after: .milliseconds(10), interval: .milliseconds(10)) { _ in
                log.append("timer in \(modeName(loop))")
            }
            let observer = LoopObserver(activities: .entry) { _, _ in log.append("entry of \(modeName(loop))") }
            for mode in [a, b] {
                loop.add(source, forMode: mode)
                loop.add(timer, forMode: mode)
                loop.add(observer, forMode: mode)
            }
            for mode in [a, b] {
                source.signal()
                clock.advance(by: .milliseconds(10))
                _ = loop.run(mode: mode, timeout: .zero)
            }
            return log.all
        }
        #expect(o == ["entry of r6-a", "source in r6-a", "timer in r6-a",
                      "entry of r6-b", "source in r6-b", "timer in r6-b"])
    }

    // MARK: R7

    struct R7Outcome: Sendable {
        var initialCommon: [Loop.Mode], finalCommon: [Loop.Mode]
        var inDefault: Bool, inTrackingBeforeJoin: Bool, inTrackingAfterJoin: Bool
        var laterObserverInTracking: Bool, laterTimerInTracking: Bool
        var directOnlyInDefault: Bool
        var scheduled: [String]
        var fired: [String]
        var result: Loop.RunResult
    }

    @Test func R7_commonItemsJoinEveryCommonModeNowAndLater() {
        let o = onThread { () -> R7Outcome in
            let loop = Loop.current
            let tracking: Loop.Mode = "r7-tracking"
            let scheduled = Recorder<String>(), fired = Recorder<String>()
            let initial = loop.commonModeNames
            let source = LoopSource(schedule: { _, mode in scheduled.append(mode.rawValue) },
                                    perform: { fired.append("source") })
            loop.add(source, forMode: .common)
            let inDefault = loop.contains(source, inMode: .default)
            let before = loop.contains(source, inMode: tracking)
            loop.addCommonMode(tracking)
            let after = loop.contains(source, inMode: tracking)
            // Items added to .common later also join the new common mode.
            let observer = LoopObserver(activities: .entry) { _, _ in fired.append("entry") }
            loop.add(observer, forMode: .common)
            let timer = LoopTimer(after: .zero) { _ in fired.append("timer") }
            loop.add(timer, forMode: .common)
            // An item added to one mode stays there.
            let direct = LoopSource {}
            loop.add(direct, forMode: tracking)
            let directOnlyInDefault = loop.contains(direct, inMode: .default)
            let laterObserver = loop.contains(observer, inMode: tracking)
            let laterTimer = loop.contains(timer, inMode: tracking)
            source.signal()
            let result = loop.run(mode: tracking, timeout: .zero)
            return R7Outcome(initialCommon: initial, finalCommon: loop.commonModeNames,
                             inDefault: inDefault, inTrackingBeforeJoin: before, inTrackingAfterJoin: after,
                             laterObserverInTracking: laterObserver, laterTimerInTracking: laterTimer,
                             directOnlyInDefault: directOnlyInDefault,
                             scheduled: scheduled.all, fired: fired.all, result: result)
        }
        #expect(o.initialCommon == [.default])
        #expect(o.finalCommon == [.default, "r7-tracking"])
        #expect(o.inDefault)
        #expect(!o.inTrackingBeforeJoin)
        #expect(o.inTrackingAfterJoin)
        #expect(o.laterObserverInTracking && o.laterTimerInTracking)
        #expect(!o.directOnlyInDefault)
        #expect(o.scheduled == [Loop.Mode.default.rawValue, "r7-tracking"], "schedule runs for each mode it joins")
        #expect(o.fired == ["entry", "source", "timer"], "common items fire in a run of the new common mode")
        #expect(o.result == .timedOut)
    }
}
