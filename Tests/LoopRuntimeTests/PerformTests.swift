#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
@testable import LoopRuntime

/// R23–R25: perform requests on a thread's loop: serial and in order, all
/// queued ones in one pass, waiting when asked; held until an admitting mode
/// runs; delayed ones as one-shot timers, in order, cancellable.
@Suite struct PerformTests {
    // MARK: R23

    @Test func R23_requestsRunSeriallyInTheOrderTheyWereQueued() {
        let worker = LoopThread(name: "r23-order")
        defer { shutDown(worker) }
        let seen = Recorder<(Int, Int)>()
        let running = Atomic<Int>(0), overlaps = Atomic<Int>(0)
        let producers = (0..<4).map { p in
            TestThread("r23-producer-\(p)") { () -> Bool in
                for i in 0..<250 {
                    worker.perform {
                        if running.wrappingAdd(1, ordering: .relaxed).newValue > 1 {
                            overlaps.wrappingAdd(1, ordering: .relaxed)
                        }
                        seen.append((p, i))
                        running.wrappingSubtract(1, ordering: .relaxed)
                    }
                }
                return true
            }
        }
        for p in producers { #expect(p.join() == true) }
        #expect(roundTrip(worker))
        let all = seen.all
        #expect(all.count == 1000)
        for p in 0..<4 {
            #expect(all.filter { $0.0 == p }.map(\.1) == Array(0..<250), "producer \(p)'s requests in its order")
        }
        #expect(overlaps.load(ordering: .relaxed) == 0, "one at a time")
    }

    @Test func R23_allQueuedRequestsRunInOnePass() {
        let worker = LoopThread(name: "r23-pass")
        defer { shutDown(worker) }
        let passes = Counter()
        worker.loop.add(LoopObserver(activities: .beforeTimers) { _, _ in passes.increment() }, forMode: .default)
        let entered = Flag(), release = Flag()
        worker.perform {
            entered.open()
            release.wait()  // hold the loop while the requests pile up
        }
        #expect(entered.wait())
        let passOfRequest = Recorder<Int>()
        for _ in 0..<100 { worker.perform { passOfRequest.append(passes.count) } }
        release.open()
        #expect(roundTrip(worker))
        let seen = passOfRequest.all
        #expect(seen.count == 100)
        #expect(Set(seen).count == 1, "all queued requests ran in one pass, not one per pass")
    }

    @Test func R23_waitUntilDoneBlocksTheCallerUntilTheRequestHasRun() {
        let worker = LoopThread(name: "r23-wait")
        defer { shutDown(worker) }
        let ranOn = Slot<Bool>()
        let doneWhenReturned = bounded { () -> Bool in
            let done = Flag()
            let queued = worker.perform(waitUntilDone: true) {
                usleep(50_000)  // a slow request: a caller that did not wait would see it unfinished
                ranOn.set(worker.loop.isCurrentThread)
                done.open()
            }
            return queued && done.isOpen
        }
        #expect(doneWhenReturned == true)
        #expect(ranOn.value == true)
    }

    @Test func R23_waitUntilDoneOnTheTargetThreadRunsTheRequestDirectly() {
        let worker = LoopThread(name: "r23-direct")
        let log = Recorder<String>()
        let finished = Flag()
        worker.perform {
            log.append("before")
            worker.perform(waitUntilDone: true) { log.append("inner") }  // would deadlock if queued
            log.append("after")
            finished.open()
        }
        let ok = finished.wait()
        #expect(ok)
        #expect(log.all == ["before", "inner", "after"])
        if ok { shutDown(worker) } else { abandon(worker) }  // a deadlocked thread cannot be joined
    }

    @Test func R23_requestsForAModeRunOnlyInThatMode() {
        let worker = LoopThread(name: "r23-modes")
        defer { shutDown(worker) }
        let log = Recorder<String>()
        worker.perform(modes: ["r23-other"]) { log.append("other") }
        worker.perform(modes: [.default]) { log.append("default") }
        #expect(roundTrip(worker, modes: [.default]))
        #expect(log.all == ["default"], "the request for another mode waits")
        worker.setRunMode("r23-other")
        #expect(eventually { log.count == 2 })
        #expect(log.all == ["default", "other"])
        worker.setRunMode(.default)
    }

    // MARK: R24

    @Test func R24_aRequestToALoopThatIsNotRunningWaitsUntilAnAdmittingModeRuns() {
        let loopSlot = Slot<Loop>()
        let queued = Flag()
        let log = Recorder<String>()
        let worker = TestThread("r24") { () -> [String] in
            let loop = Loop.current
            loop.add(keepAlive(), forMode: "r24-other")
            loopSlot.set(loop)
            guard queued.wait() else { return ["never queued"] }
            var seen: [String] = ["queued while not running: \(log.all)"]
            _ = loop.run(mode: "r24-other", timeout: .zero)  // does not admit it
            seen.append("after a run of another mode: \(log.all)")
            loop.add(keepAlive(), forMode: .default)
            let r = loop.run(mode: .default, timeout: .seconds(10))  // admits it
            seen.append("after a run of the default mode: \(log.all), \(r)")
            return seen
        }
        let loop = loopSlot.wait()!
        loop.perform(inModes: [.default]) {
            log.append("request")
            Loop.current.stop()
        }
        queued.open()
        #expect(worker.join() == [
            "queued while not running: []",
            "after a run of another mode: []",
            "after a run of the default mode: [\"request\"], stopped",
        ])
    }

    @Test func R24_aRequestForAModeTheThreadIsNotRunningWaitsAndIsNotLost() {
        let worker = LoopThread(name: "r24-held", mode: "r24-other")
        defer { shutDown(worker) }
        let log = Recorder<String>()
        let caller = TestThread("r24-caller") { () -> Bool in
            worker.perform(waitUntilDone: true, modes: [.default]) { log.append("request") }
        }
        let later = Recorder<Int>()
        for i in 0..<3 { worker.perform(modes: [.default]) { later.append(i) } }
        // The premise: all four are queued (the caller's too, which another
        // thread queues) before the passes below begin.
        #expect(eventually { queuedBlocks(worker.loop, for: .default) == 4 }, "the requests were never all queued")
        // Passes of a mode that does not admit them: each round trip is a
        // pass begun after the requests were queued, so they had every
        // chance to run (or be dropped) there.
        for _ in 0..<3 { #expect(roundTrip(worker, modes: ["r24-other"])) }
        #expect(log.all.isEmpty, "a request ran in a mode that does not admit it")
        #expect(later.all.isEmpty)
        #expect(!caller.isFinished, "the waiting caller was released before its request ran")
        #expect(eventually { queuedBlocks(worker.loop, for: .default) == 4 }, "a held request left the queue")
        worker.setRunMode(.default)
        #expect(caller.join() == true, "the waiting caller is told its request ran")
        #expect(eventually { later.count == 3 })
        #expect(log.all == ["request"], "it ran once, when a mode that admits it ran")
        #expect(later.all == [0, 1, 2], "none lost, in the order they were queued")
    }

    // MARK: LoopThread shutdown

    @Test func aStoppedLoopThreadRefusesRequests() {
        let worker = LoopThread(name: "stopped")
        shutDown(worker)
        let ran = Counter()
        #expect(worker.perform { ran.increment() } == false)
        #expect(bounded { worker.perform(waitUntilDone: true) { ran.increment() } } == false)
        #expect(ran.count == 0)
    }

    // MARK: R25

    @Test func R25_delayedRequestsDueTogetherRunInQueueOrderAndCancelledOnesNever() {
        let clock = ManualClock()
        let worker = LoopThread(name: "r25-order", clock: .manual(clock))
        defer { shutDown(worker) }
        let log = Recorder<Int>()
        let tokens = (0..<5).map { i in worker.perform(afterDelay: .milliseconds(10)) { log.append(i) } }
        #expect(worker.cancelPerform(tokens[2]))
        #expect(tokens[2].isDone)
        clock.advance(by: .milliseconds(9))
        settle(worker)
        #expect(log.all.isEmpty, "not due yet")
        clock.advance(by: .milliseconds(1))
        #expect(eventually { log.count == 4 })
        settle(worker)
        #expect(log.all == [0, 1, 3, 4])
        #expect(!worker.cancelPerform(tokens[0]), "too late: it ran")
    }

    @Test func R25_delayedRequestsRunByDueTimeNotQueueOrder() {
        let clock = ManualClock()
        let worker = LoopThread(name: "r25-due", clock: .manual(clock))
        defer { shutDown(worker) }
        let log = Recorder<String>()
        worker.perform(afterDelay: .milliseconds(20)) { log.append("20 ms, queued first") }
        worker.perform(afterDelay: .milliseconds(10)) { log.append("10 ms, queued second") }
        clock.advance(by: .milliseconds(20))
        #expect(eventually { log.count == 2 })
        #expect(log.all == ["10 ms, queued second", "20 ms, queued first"])
    }

    @Test func R25_aDelayedRequestIsAOneShotTimerInTheCurrentThreadsLoop() {
        let clock = ManualClock()
        let o = onThread { () -> [String] in
            let loop = Loop.current
            useManualClock(clock, on: loop)
            let log = Recorder<String>()
            let t0 = clock.now()
            loop.perform(afterDelay: .milliseconds(30)) { log.append("ran on its thread: \(loop.isCurrentThread)") }
            log.append("next timer at +30: \(loop.limitDate(forMode: .default) == t0 + .milliseconds(30))")
            let cancelled = loop.perform(afterDelay: .milliseconds(10)) { log.append("cancelled one ran") }
            cancelled.cancel()
            clock.advance(by: .milliseconds(30))
            log.append("\(boundedRun(loop))")  // finished: the timer was one-shot
            log.append("timers left: \(loop.limitDate(forMode: .default) == nil ? 0 : 1)")
            return log.all
        }
        #expect(o == ["next timer at +30: true", "ran on its thread: true", "finished", "timers left: 0"])
    }

    /// How many blocks wait in `loop`'s queue for a pass of `mode`, one of its
    /// common modes. A pass that is running blocks has taken them out: a
    /// caller that needs a stable count waits for it.
    private func queuedBlocks(_ loop: Loop, for mode: Loop.Mode) -> Int {
        loop.inbox.withLock { $0.blocks.admittedCount(mode: mode, modeIsCommon: true) }
    }

    /// Returns once the worker's loop has finished a pass begun after this
    /// call: two requests in a row straddle a pass's timer step.
    private func settle(_ worker: LoopThread) {
        roundTrip(worker)
        roundTrip(worker)
    }
}
