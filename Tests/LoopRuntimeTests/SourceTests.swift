import Testing
@testable import LoopRuntime

/// R8–R11: custom (version-0) sources fire once per signal after a wake-up;
/// ports (version 1) wake the loop by themselves; lower order first;
/// invalidated sources never fire.
@Suite struct SourceTests {
    // MARK: R8

    @Test func R8_aSourceFiresOnlyAfterBeingSignalledAndTwoSignalsFireOnce() {
        let counts = onThread { () -> [Int] in
            let loop = Loop.current
            let fired = Counter()
            let source = LoopSource { fired.increment() }
            loop.add(source, forMode: .default)
            var counts: [Int] = []
            _ = loop.run(mode: .default, timeout: .zero)
            counts.append(fired.count)  // not signalled: nothing
            source.signal()
            source.signal()
            _ = loop.run(mode: .default, timeout: .zero)
            counts.append(fired.count)  // two signals, one firing
            _ = loop.run(mode: .default, timeout: .zero)
            counts.append(fired.count)  // the signal was consumed
            return counts
        }
        #expect(counts == [0, 1, 1])
    }

    @Test func R8_aSignalFromAnotherThreadPlusWakeUpFiresOnTheLoopsThread() {
        let onLoopThread = Slot<Bool>()
        let loopSlot = Slot<Loop>()
        let source = LoopSource { onLoopThread.set(loopSlot.value?.isCurrentThread ?? false) }
        let worker = TestThread("r8-signal") { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(source, forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        source.signal()
        #expect(onLoopThread.value == nil, "signalling does not run the handler on the signalling thread")
        loop.wakeUp()
        #expect(worker.join() == .handledSource, "the signalled source fires once the loop is woken")
        #expect(onLoopThread.value == true)
    }

    @Test func R8_scheduleAndCancelCallbacksRunOnAddRemoveAndInvalidate() {
        let (log, validAfter, addedAfterInvalidate) = onThread { () -> ([String], Bool, Bool) in
            let loop = Loop.current
            let log = Recorder<String>()
            let source = LoopSource(
                schedule: { l, mode in log.append("schedule \(mode) \(l === loop)") },
                cancel: { l, mode in log.append("cancel \(mode) \(l === loop)") },
                perform: {})
            loop.add(source, forMode: "r8-a")
            loop.add(source, forMode: "r8-b")
            loop.remove(source, forMode: "r8-a")
            loop.remove(source, forMode: "r8-a")  // not there any more: no callback
            source.invalidate()
            loop.add(source, forMode: "r8-c")      // invalid: refused, no callback
            return (log.all, source.isValid, loop.contains(source, inMode: "r8-c"))
        }
        #expect(log == ["schedule r8-a true", "schedule r8-b true", "cancel r8-a true", "cancel r8-b true"])
        #expect(!validAfter)
        #expect(!addedAfterInvalidate)
    }

    // MARK: R9

    @Test func R9_aPortMessageWakesASleepingLoopByItself() {
        let received = Recorder<LoopMessage>()
        let onLoopThread = Slot<Bool>()
        let loopSlot = Slot<Loop>()
        let port = LoopPort { m in
            received.append(m)
            onLoopThread.set(loopSlot.value?.isCurrentThread ?? false)
        }
        let worker = TestThread("r9-port") { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(port, forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
        }
        let loop = loopSlot.wait()!
        #expect(waitUntilSleeping(loop))
        let wakes = loop.wakeUpCount
        port.send(id: 100, payload: Array("hello".utf8))  // no wakeUp(): the kernel wakes the loop
        #expect(worker.join() == .handledSource)
        #expect(received.all == [LoopMessage(id: 100, payload: Array("hello".utf8))])
        #expect(onLoopThread.value == true)
        #expect(loop.wakeUpCount > wakes)
    }

    @Test func R9_messagesArriveInOrderOnePerRunWhenReturningAfterASource() {
        let (results, ids) = onThread { () -> ([Loop.RunResult], [Int32]) in
            let loop = Loop.current
            let ids = Recorder<Int32>()
            let port = LoopPort { ids.append($0.id) }
            loop.add(port, forMode: .default)
            for id in Int32(1)...3 { port.send(id: id) }
            var results: [Loop.RunResult] = []
            for _ in 0..<3 { results.append(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)) }
            return (results, ids.all)
        }
        #expect(results == [.handledSource, .handledSource, .handledSource])
        #expect(ids == [1, 2, 3])
    }

    /// Regression: a port added after the pass rebuilt its epoll set but
    /// before the loop slept (here from a beforeWaiting observer, the last
    /// thing a pass does before sleeping) was not watched during that sleep,
    /// so its messages did not wake the loop.
    @Test func R9_aPortAddedJustBeforeTheLoopSleepsStillWakesIt() {
        let added = Flag()
        let received = Counter()
        let port = LoopPort { _ in received.increment() }
        let loopSlot = Slot<Loop>()
        let worker = TestThread("r9-late-add") { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(keepAlive(), forMode: .default)
            loop.add(LoopObserver(activities: .beforeWaiting, repeats: false) { _, _ in
                loop.add(port, forMode: .default)
                added.open()
            }, forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
        }
        let loop = loopSlot.wait()!
        #expect(added.wait())
        #expect(waitUntilSleeping(loop))
        port.send(id: 1)
        #expect(worker.join() == .handledSource, "the message woke the loop")
        #expect(received.count == 1)
    }

    // MARK: R10

    @Test func R10_readyVersion0SourcesFireByOrderThenByAddition() {
        let order = onThread { () -> [String] in
            let loop = Loop.current
            let log = Recorder<String>()
            let sources = [(5, "five"), (-1, "minus-one"), (2, "two-first"), (2, "two-second"), (0, "zero")]
                .map { order, label in LoopSource(order: order) { log.append(label) } }
            for s in sources { loop.add(s, forMode: .default) }
            for s in sources.reversed() { s.signal() }
            _ = loop.run(mode: .default, timeout: .zero)
            return log.all
        }
        #expect(order == ["minus-one", "zero", "two-first", "two-second", "five"])
    }

    @Test func R17_R10_aRunThatReturnsAfterASourceFiresOneVersion0SourceTheLowestOrder() {
        // CF: with returnAfterSourceHandled, the source step stops after the
        // first version-0 source it handles; the others stay signalled.
        let (results, fired) = onThread { () -> ([Loop.RunResult], [[String]]) in
            let loop = Loop.current
            let log = Recorder<String>()
            let sources = [(2, "order 2"), (0, "order 0"), (1, "order 1")]
                .map { order, label in LoopSource(order: order) { log.append(label) } }
            for s in sources { loop.add(s, forMode: .default) }
            for s in sources { s.signal() }
            var results: [Loop.RunResult] = []
            var fired: [[String]] = []
            for _ in 0..<4 {
                let before = log.all.count
                results.append(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: true))
                fired.append(Array(log.all[before...]))
            }
            return (results, fired)
        }
        #expect(results == [.handledSource, .handledSource, .handledSource, .timedOut])
        #expect(fired == [["order 0"], ["order 1"], ["order 2"], []])
    }

    @Test func R10_readyPortsAreHandledByOrder() {
        let order = onThread { () -> [String] in
            let loop = Loop.current
            let log = Recorder<String>()
            let high = LoopPort(order: 10) { _ in log.append("order 10") }
            let low = LoopPort(order: -3) { _ in log.append("order -3") }
            let mid = LoopPort(order: 4) { _ in log.append("order 4") }
            for p in [high, low, mid] { loop.add(p, forMode: .default) }
            for p in [high, mid, low] { p.send(id: 1) }
            _ = loop.run(mode: .default, timeout: .zero)
            return log.all
        }
        #expect(order == ["order -3", "order 4", "order 10"])
    }

    // MARK: R11

    @Test func R11_anInvalidatedSourceLeavesEveryModeAndNeverFires() {
        let o = onThread { () -> [String] in
            let loop = Loop.current
            let log = Recorder<String>()
            let doomed = LoopSource(cancel: { _, mode in log.append("cancel \(mode)") },
                                    perform: { log.append("doomed fired") })
            let other = LoopSource { log.append("other fired") }
            for mode: Loop.Mode in ["r11-a", "r11-b"] {
                loop.add(doomed, forMode: mode)
                loop.add(other, forMode: mode)
            }
            doomed.signal()
            other.signal()
            // Invalidated from another thread while it is signalled.
            onThread { doomed.invalidate() }
            log.append("in a: \(loop.contains(doomed, inMode: "r11-a")), in b: \(loop.contains(doomed, inMode: "r11-b"))")
            _ = loop.run(mode: "r11-a", timeout: .zero)
            doomed.signal()
            other.signal()
            _ = loop.run(mode: "r11-b", timeout: .zero)
            return log.all
        }
        // One cancel per mode it was in (the modes in no particular order).
        #expect(Set(o.prefix(2)) == ["cancel r11-a", "cancel r11-b"])
        #expect(Array(o.dropFirst(2)) == ["in a: false, in b: false", "other fired", "other fired"])
    }

    @Test func R11_anInvalidatedPortRefusesMessagesAndNeverDelivers() {
        let (sendAccepted, delivered, result) = onThread { () -> (Bool, Int, Loop.RunResult) in
            let loop = Loop.current
            let delivered = Counter()
            let port = LoopPort { _ in delivered.increment() }
            loop.add(port, forMode: .default)
            port.send(id: 1)  // queued before invalidation: dropped with it
            port.invalidate()
            let accepted = port.send(id: 2)
            // The port was the mode's only item: the mode is empty now.
            let result = loop.run(mode: .default, timeout: .seconds(10))
            return (accepted, delivered.count, result)
        }
        #expect(!sendAccepted)
        #expect(delivered == 0)
        #expect(result == .finished)
    }
}
