import Testing
@testable import LoopRuntime

/// R26: a resident thread keeps its loop alive with a port, runs it over
/// and over, and leaves only when a request performed on it sets the stop
/// flag and stops the loop; then its loop is torn down and the thread exits.
@Suite struct ResidentThreadTests {
    @Test func R26_aResidentThreadRunsItsLoopWithNoItemsOfItsOwnAndServesRequests() {
        let worker = LoopThread(name: "r26-serve")
        defer { shutDown(worker) }
        #expect(worker.isRunning)
        // No source or timer of the caller's: the thread's port keeps the loop
        // from finishing, so it sleeps instead of exiting.
        #expect(waitUntilSleeping(worker.loop))
        #expect(worker.loop.currentMode == .default)
        let where_ = Slot<String>()
        #expect(bounded {
            worker.perform(waitUntilDone: true) {
                where_.set("on its thread: \(worker.loop.isCurrentThread), same loop: \(Loop.current === worker.loop)")
            }
        } == true)
        #expect(where_.value == "on its thread: true, same loop: true")
    }

    @Test func R26_stoppingTheLoopAloneDoesNotEndAResidentThread() {
        let worker = LoopThread(name: "r26-loopstop")
        defer { shutDown(worker) }
        #expect(waitUntilSleeping(worker.loop))
        let wakes = worker.loop.wakeUpCount
        worker.loop.stop()  // ends one run; the thread runs its loop again
        #expect(eventually { worker.loop.wakeUpCount > wakes && worker.loop.isWaiting })
        #expect(worker.isRunning)
        let served = Counter()
        #expect(bounded { worker.perform(waitUntilDone: true) { served.increment() } } == true)
        #expect(served.count == 1)
    }

    @Test func R26_stopLeavesTheLoopTearsItDownAndEndsTheThread() {
        let worker = LoopThread(name: "r26-stop")
        let timer = LoopTimer(after: .seconds(3600)) { _ in }
        worker.loop.add(timer, forMode: .default)
        let ran = Counter()
        for _ in 0..<100 { worker.perform { ran.increment() } }
        shutDown(worker)  // stop() returns once the thread has been joined
        #expect(!worker.isRunning)
        #expect(ran.count == 100, "requests queued before stop() still ran")
        #expect(worker.loop.currentMode == nil, "the loop is no longer running")
        #expect(!timer.isValid, "the exiting thread tore its loop down")
        #expect(worker.perform { ran.increment() } == false)
        #expect(ran.count == 100)
        shutDown(worker)  // a second stop is harmless
    }

    @Test func R26_R20_aStopAskedAsTheThreadStartsStillEndsIt() {
        // LoopThread's stop is a request of its own, not a Loop.stop(): one
        // made before the thread's loop first runs is kept until that run
        // handles it, so it cannot fall between two runs (R20 gives a stop
        // with no run in progress no effect).
        for i in 0..<200 {
            let worker = LoopThread(name: "r26-race-\(i)")
            shutDown(worker)
            #expect(!worker.isRunning)
            #expect(worker.loop.currentMode == nil, "thread \(i) left its loop")
        }
    }

    @Test func R26_aResidentThreadFollowsItsRunModeAndStopsFromAnyMode() {
        let worker = LoopThread(name: "r26-mode", mode: "r26-custom")
        #expect(worker.runMode == "r26-custom")
        #expect(eventually { worker.loop.currentMode == "r26-custom" })
        worker.setRunMode("r26-other")
        #expect(eventually { worker.loop.currentMode == "r26-other" })
        shutDown(worker)
        #expect(!worker.isRunning)
    }
}
