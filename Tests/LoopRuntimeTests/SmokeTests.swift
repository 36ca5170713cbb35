import Testing
@testable import LoopRuntime

@Suite struct SmokeTests {
    @Test func emptyModeFinishes() {
        #expect(Loop.current.run(mode: "nothing-here", timeout: .seconds(1)) == .finished)
    }

    @Test func threadPerformWaits() {
        let t = LoopThread(name: "smoke")
        let c = Counter()
        for _ in 0..<1000 { t.perform { c.increment() } }
        t.perform(waitUntilDone: true) { c.increment() }
        #expect(c.count == 1001)
        t.stop()
        #expect(!t.isRunning)
    }

    @Test func timerFires() {
        let loop = Loop.current
        let c = Counter()
        let timer = LoopTimer(after: .milliseconds(5), interval: .milliseconds(5)) { t in
            c.increment()
            if c.count == 3 { t.invalidate() }
        }
        loop.add(timer, forMode: .default)
        let r = loop.run(mode: .default, timeout: .seconds(10))
        #expect(r == .finished)
        #expect(c.count == 3)
    }
}
