import Glibc
import Synchronization
import Testing
@testable import LoopRuntime

/// The opt-in spin before sleeping (`Loop.spinBeforeSleeping`): it changes
/// how the loop waits, never what a pass does. The spins here are long (20
/// ms) so that work really arrives while the loop spins.
@Suite struct SpinTests {
    private static let spin: Duration = .milliseconds(20)

    @Test func theSettingReadsBackAndIsOffByDefault() {
        let plain = LoopThread(name: "spin-off")
        defer { shutDown(plain) }
        #expect(plain.loop.spinBeforeSleeping == .zero)
        let spinning = LoopThread(name: "spin-on", spinBeforeSleeping: .microseconds(50))
        defer { shutDown(spinning) }
        #expect(spinning.loop.spinBeforeSleeping == .microseconds(50))
        spinning.loop.spinBeforeSleeping = .zero
        #expect(spinning.loop.spinBeforeSleeping == .zero)
    }

    @Test func R23_blocksQueuedDuringTheSpinRunInOrderWithoutAWakeUp() {
        let worker = LoopThread(name: "spin-order", spinBeforeSleeping: Self.spin)
        defer { shutDown(worker) }
        let log = Recorder<Int>()
        #expect(roundTrip(worker))
        let wakeUps = worker.loop.wakeUpCount
        for i in 0..<100 { worker.perform { log.append(i) } }
        #expect(eventually { log.count == 100 })
        #expect(log.all == Array(0..<100))
        // Arriving within a spin, they needed no eventfd wake-up.
        #expect(worker.loop.wakeUpCount == wakeUps)
    }

    @Test func anIdleSpinningLoopStillSleepsWithZeroWakeUps() {
        let worker = LoopThread(name: "spin-idle", spinBeforeSleeping: .microseconds(200))
        defer { shutDown(worker) }
        #expect(roundTrip(worker))
        #expect(eventually { worker.loop.isWaiting })
        let wakeUps = worker.loop.wakeUpCount
        usleep(200_000)
        #expect(worker.loop.isWaiting)
        #expect(worker.loop.wakeUpCount == wakeUps)
    }

    @Test func R12_aTimerDueDuringTheSpinFiresOnTimeNotEarly() {
        let worker = LoopThread(name: "spin-timer", spinBeforeSleeping: .seconds(5))
        defer { shutDown(worker) }
        let fired = Slot<UInt64>()
        let start = Atomic<UInt64>(0)
        worker.perform {
            start.store(monotonicNanoseconds(), ordering: .relaxed)
            _ = worker.perform(afterDelay: .milliseconds(5)) { fired.set(monotonicNanoseconds()) }
        }
        guard let at = fired.wait(10) else {
            Issue.record("the timer never fired")
            return
        }
        let late = Int64(at) - Int64(start.load(ordering: .relaxed)) - 5_000_000
        #expect(late >= 0, "fired \(-late) ns early")
        #expect(late < 1_000_000_000, "the spin (5 s) held the timer back")
    }

    @Test func R9_aDescriptorReadyDuringTheSpinIsHandled() {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let worker = LoopThread(name: "spin-fd", spinBeforeSleeping: .seconds(5))
        defer { shutDown(worker) }
        let got = Counter()
        let readEnd = fds[0]
        let source = LoopFileDescriptorSource(fileDescriptor: readEnd, interest: .readable) { readiness in
            var buf = [UInt8](repeating: 0, count: 16)
            if readiness.readable && read(readEnd, &buf, 16) > 0 { got.increment() }
        }
        worker.loop.add(source, forMode: .common)
        #expect(roundTrip(worker))
        #expect(write(fds[1], "x", 1) == 1)
        #expect(eventually(2) { got.count == 1 }, "handled within the 5 s spin")
        source.invalidate()
    }

    @Test func R20_stopEndsASpinningRun() {
        let loopSlot = Slot<Loop>()
        let worker = TestThread("spin-stop") { () -> Loop.RunResult in
            let loop = Loop.current
            loop.spinBeforeSleeping = .seconds(5)
            loop.add(keepAlive(), forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: .seconds(20))
        }
        let loop = loopSlot.wait()!
        usleep(20_000)
        let asked = monotonicNanoseconds()
        loop.stop()
        #expect(worker.join() == .stopped)
        #expect(monotonicNanoseconds() - asked < 2_000_000_000, "stop waited for the spin")
    }
}
