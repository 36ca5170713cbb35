#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import LoopRuntime

/// R1–R3: one loop per thread, created on demand and torn down with its
/// thread; a loop runs only on its own thread; an empty mode finishes at once.
@Suite struct LoopTests {
    // MARK: R1

    @Test func R1_aThreadHasNoLoopUntilItAsksThenAlwaysTheSameOne() {
        let (before, first, second, afterIsSame) = onThread { () -> (Bool, Loop, Loop, Bool) in
            let before = LoopRegistry.shared.currentLoopIfAny() == nil
            let first = Loop.current
            let second = Loop.current
            return (before, first, second, LoopRegistry.shared.currentLoopIfAny() === first)
        }
        #expect(before, "a new thread must not have a loop before it asks for one")
        #expect(first === second)
        #expect(afterIsSame)
    }

    @Test func R1_eachThreadHasItsOwnLoop() {
        let a = onThread { Loop.current }
        let b = onThread { Loop.current }
        #expect(a !== b)
        #expect(!a.isMain && !b.isMain)
    }

    @Test func R1_theLoopIsTornDownWhenItsThreadExits() {
        let timer = LoopTimer(after: .seconds(3600)) { _ in }
        let gone = onThread { () -> WeakRef<Loop> in
            let loop = Loop.current
            loop.add(timer, forMode: .default)
            return WeakRef(loop)
        }
        // The thread has exited (joined): its loop left the table and was freed.
        #expect(eventually { gone.object == nil }, "a finished thread's loop must be released")
        #expect(!timer.isValid, "tearing a loop down invalidates its timers")
    }

    @Test func R1_mainLoopIsTheSameFromEveryThread() {
        let a = onThread { Loop.main }
        let b = onThread { Loop.main }
        let c = Loop.main
        #expect(a === b && b === c)
        #expect(a.isMain)
        let mine = onThread { Loop.current }
        #expect(mine !== a)
    }

    // MARK: R2

    @Test func R2_aLoopNotRunningFiresNothingAndLosesNothing() {
        let fired = Recorder<String>()
        let loopSlot = Slot<Loop>()
        let ready = Flag(), release = Flag()
        let source = LoopSource { fired.append("source") }
        let port = LoopPort { m in fired.append("port:\(m.id)") }
        let timer = LoopTimer(after: .zero) { _ in fired.append("timer") }
        let worker = TestThread("r2") { () -> [String] in
            let loop = Loop.current
            loop.add(source, forMode: .default)
            loop.add(port, forMode: .default)
            loop.add(timer, forMode: .default)
            loopSlot.set(loop)
            ready.open()
            // The thread is busy with something else: its loop is not running.
            guard release.wait() else { return ["release never came"] }
            var seen: [String] = []
            for _ in 0..<4 where fired.count < 4 {
                _ = loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
                seen = fired.all
            }
            return seen
        }
        #expect(ready.wait())
        let loop = loopSlot.value!
        // Everything that could make a loop do work, from another thread.
        source.signal()
        loop.wakeUp()
        port.send(id: 7)
        loop.perform(inModes: [.default]) { fired.append("block") }
        // Whatever the library did with those calls, nothing ran: only the
        // owning thread runs a loop, and it is parked.
        usleep(20_000)
        #expect(fired.all.isEmpty)
        #expect(source.isSignalled)
        #expect(port.pendingCount == 1)
        release.open()
        let seen = worker.join() ?? []
        #expect(Set(seen) == ["source", "port:7", "timer", "block"], "events wait for the run; none is lost")
    }

    @Test func R2_onlyTheOwningThreadMayRunALoop() async {
        await #expect(processExitsWith: .failure) {
            let other = onThread { Loop.current }
            _ = other.run(mode: .default, timeout: .zero)
        }
    }

    // MARK: R3

    @Test func R3_aModeWithNothingFinishesAtOnce() {
        let result = onThread { Loop.current.run(mode: "r3-nothing", timeout: .seconds(10)) }
        #expect(result == .finished)
    }

    @Test func R3_observersAloneDoNotKeepAModeRunningAndEntryIsNotSent() {
        let log = Recorder<String>()
        let result = onThread { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(activityLogger(log), forMode: "r3-observed")
            return loop.run(mode: "r3-observed", timeout: .seconds(10))
        }
        #expect(result == .finished)
        #expect(log.all.isEmpty, "a run that does not enter sends no notifications")
    }

    @Test func R3_aModeWhoseLastSourceWasRemovedFinishes() {
        let (first, second) = onThread { () -> (Loop.RunResult, Loop.RunResult) in
            let loop = Loop.current
            let source = LoopSource {}
            loop.add(source, forMode: "r3-emptied")
            let first = loop.run(mode: "r3-emptied", timeout: .zero)
            loop.remove(source, forMode: "r3-emptied")
            return (first, loop.run(mode: "r3-emptied", timeout: .seconds(10)))
        }
        #expect(first == .timedOut)
        #expect(second == .finished)
    }
}
