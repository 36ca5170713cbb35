import LoopPlatform
import Testing
@testable import LoopRuntime

/// An actor pinned to a resident thread.
actor PinnedCounter {
    let thread: LoopThread
    private var value = 0
    init(thread: LoopThread) { self.thread = thread }
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    func increment() -> (Int, Bool) {
        value += 1
        return (value, thread.loop.isCurrentThread)
    }
}

@Suite struct ThreadFeatureTests {
    @Test func actorPinnedToLoopThreadRunsOnIt() async {
        let thread = LoopThread(name: "actor-exec")
        let counter = PinnedCounter(thread: thread)
        for i in 1...20 {
            let (value, onThread) = await counter.increment()
            #expect(value == i)
            #expect(onThread)
        }
        thread.stop()
    }

    @Test func asyncPerformReturnsTheBlocksResult() async throws {
        let thread = LoopThread(name: "async-perform")
        let result = try await thread.perform { () -> Bool in thread.loop.isCurrentThread }
        #expect(result)
        thread.stop()
        await #expect(throws: LoopThreadError.stopped) { try await thread.perform { 1 } }
    }

    /// Item 9: a worker stuck in a callout is visible from another thread.
    @Test func stallIsVisibleFromAnotherThread() {
        let thread = LoopThread(name: "stall")
        defer { thread.stop() }
        #expect(eventually { thread.loop.isWaiting && thread.loop.stalledDuration == .zero })
        let release = Latch()
        thread.perform { release.wait() }
        #expect(eventually { thread.loop.stalledDuration >= .milliseconds(50) })
        #expect(thread.loop.health.calloutStartedAt != nil)
        release.open()
        #expect(eventually { thread.loop.stalledDuration == .zero && thread.loop.health.calloutStartedAt == nil })
    }

    /// Item 8: the CFRunLoop-style dump names modes and their items.
    @Test func descriptionShowsModesAndItems() {
        let thread = LoopThread(name: "describe")
        defer { thread.stop() }
        let loop = thread.loop
        loop.addCommonMode("tracking")
        let timer = LoopTimer(after: .seconds(60), interval: .seconds(1)) { _ in }
        loop.add(timer, forMode: "tracking")
        let observer = LoopObserver(activities: [.beforeWaiting, .afterWaiting], order: 7) { _, _ in }
        loop.add(observer, forMode: .common)
        let source = LoopSource(order: 3) {}
        loop.add(source, forMode: .default)
        #expect(eventually { loop.isWaiting })
        let text = String(describing: loop)
        #expect(text.contains("current mode = kLoopDefaultMode"))
        #expect(text.contains("common modes = {"))
        #expect(text.contains(": tracking"))
        #expect(text.contains("<LoopMode> {name = tracking"))
        #expect(text.contains("next fire date = "))
        #expect(text.contains("activities = 0x60 (beforeWaiting|afterWaiting)"))
        #expect(text.contains("order = 7"))
        #expect(text.contains("signalled = No, valid = Yes, order = 3, version = 0"))
        timer.invalidate()
        observer.invalidate()
        source.invalidate()
    }

    /// Item 11: limitDate(forMode:) is the mode's next timer fire date.
    @Test func limitDateIsTheNextTimerFireDate() {
        let clock = ManualClock()
        let thread = LoopThread(name: "limit", clock: .manual(clock))
        defer { thread.stop() }
        let start = clock.now()
        let early = LoopTimer(after: .seconds(5)) { _ in }
        let late = LoopTimer(after: .seconds(9)) { _ in }
        thread.loop.add(late, forMode: "m")
        thread.loop.add(early, forMode: "m")
        #expect(thread.loop.limitDate(forMode: "m") == start.advanced(by: .seconds(5)))
        early.invalidate()
        #expect(thread.loop.limitDate(forMode: "m") == start.advanced(by: .seconds(9)))
        #expect(thread.loop.limitDate(forMode: "empty") == nil)
        late.invalidate()
    }
}

/// Bug perform-token-cycle: a token held its timer, whose handler held the
/// token, so every delayed request leaked its timer and block.
@Suite struct PerformTokenCycleTests {
    @Test func bugPerformTokenCycle_spentRequestsReleaseTheirTimers() {
        let thread = LoopThread(name: "token-cycle")
        defer { thread.stop() }
        let ran = Counter()
        let fired = thread.perform(afterDelay: .milliseconds(1)) { ran.increment() }
        let cancelled = thread.perform(afterDelay: .seconds(60)) { ran.increment() }
        #expect(cancelled.cancel())
        #expect(eventually { ran.count == 1 })
        // The tokens are still held here; their timers must not be.
        #expect(eventually { fired.timer == nil && cancelled.timer == nil })
        #expect(ran.count == 1)
    }
}

/// Bug perform-wait-outlives-thread: `perform(waitUntilDone: true)` waited
/// for its block forever when the thread exited without running it — a block
/// for a mode the thread never ran again, or one queued in the instant
/// `stop()` was stopping the thread. The waiting call now returns false.
@Suite struct PerformWaitTests {
    @Test func performWaitOutlivesThread_aWaitForAModeNeverRunEndsWhenTheThreadStops() {
        let thread = LoopThread(name: "wait-never")
        let waiter = TestThread("waiter") { () -> Bool in
            thread.perform(waitUntilDone: true, modes: ["loopd.tests.never-run"]) {}
        }
        #expect(eventually { thread.loop.isWaiting })
        thread.stop()
        #expect(waiter.join(30) == false, "the block never ran, and the caller is told so")
    }

    @Test func performWaitOutlivesThread_waitsRacingStopAllReturn() {
        for i in 0..<200 {
            let thread = LoopThread(name: "wait-race")
            let waiters = (0..<4).map { _ in
                TestThread("racer") { () -> Bool in thread.perform(waitUntilDone: true) {} }
            }
            thread.stop()
            for w in waiters {
                guard w.join(30) != nil else {
                    Issue.record("round \(i): a waiting perform never returned")
                    return
                }
            }
        }
    }

    @Test func aWaitedBlockThatRanReportsTrue() {
        let thread = LoopThread(name: "wait-ran")
        defer { thread.stop() }
        let ran = Counter()
        #expect(thread.perform(waitUntilDone: true) { ran.increment() })
        #expect(ran.count == 1)
    }
}
