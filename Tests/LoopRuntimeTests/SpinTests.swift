import LoopPlatform
import Glibc
import Synchronization
import Testing
@testable import LoopRuntime

/// The opt-in spin before sleeping (`Loop.spinBeforeSleeping`): it changes
/// how the loop waits, never what a pass does. The spins here last an hour,
/// far longer than any test: only work, a descriptor, a timer's date, the
/// run's deadline or `stop()` can end one. So a test can wait until the loop
/// spins (`isSpinning`) and then act, knowing the spin is still going on;
/// a spin that failed to end would hold the test until its bounded waits
/// give up, never pass it.
@Suite struct SpinTests {
    private static let spin: Duration = .seconds(3600)

    /// Whether `loop` is spinning before a sleep right now (it says so under
    /// its inbox's lock, where wakers look).
    private func isSpinning(_ loop: Loop) -> Bool { loop.inbox.withLock { if case .spinning = $0.waiting { true } else { false } } }

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
        // The premise: the loop spins when the first block arrives. It then
        // never reaches a sleep in the kernel during the test (the spin
        // outlasts it), so every later block finds it spinning or awake.
        #expect(eventually { isSpinning(worker.loop) }, "the loop never started its spin")
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

    @Test func R14_aTimerDueDuringTheSpinFiresAtItsDateNeverEarly() {
        let worker = LoopThread(name: "spin-timer", spinBeforeSleeping: Self.spin)
        defer { shutDown(worker) }
        #expect(roundTrip(worker))
        // The premise: the loop is seen spinning while its timer is not yet
        // due. This thread may not get to look within a short delay; such
        // a round proves nothing about the spin (it still must not fire
        // early) and is tried again with a longer one.
        for delay in [20, 200, 2000] {
            let fired = Slot<UInt64>()
            let start = Atomic<UInt64>(0)
            let scheduled = Flag()
            worker.perform {
                start.store(monotonicNanoseconds(), ordering: .relaxed)
                _ = worker.perform(afterDelay: .milliseconds(delay)) { fired.set(monotonicNanoseconds()) }
                scheduled.open()
            }
            #expect(scheduled.wait())
            _ = eventually(30) { isSpinning(worker.loop) || fired.value != nil }
            let spunWhileNotDue = fired.value == nil  // read after the spin was seen: the spin came first
            guard let at = fired.wait(30) else {
                Issue.record("the timer never fired: a spin that ignored its date would hold it for an hour")
                return
            }
            let late = Int64(at) - Int64(start.load(ordering: .relaxed)) - Int64(delay) * 1_000_000
            #expect(late >= 0, "fired \(-late) ns early")
            if spunWhileNotDue { return }
        }
        Issue.record("the loop was never seen spinning before its timer came due, even 2 s ahead: nothing was tested")
    }

    @Test func R9_aDescriptorReadyDuringTheSpinIsHandled() {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let worker = LoopThread(name: "spin-fd", spinBeforeSleeping: Self.spin)
        defer { shutDown(worker) }
        let got = Counter()
        let readEnd = fds[0]
        let source = LoopFileDescriptorSource(fileDescriptor: readEnd, interest: .readable) { readiness in
            var buf = [UInt8](repeating: 0, count: 16)
            if readiness.readable && read(readEnd, &buf, 16) > 0 { got.increment() }
        }
        worker.loop.add(source, forMode: .common)
        #expect(roundTrip(worker))
        // The premise: the byte arrives while the loop spins, with the
        // descriptor in its epoll set (a spin starts only once the set is current).
        #expect(eventually { isSpinning(worker.loop) }, "the loop never started its spin")
        #expect(write(fds[1], "x", 1) == 1)
        #expect(eventually(30) { got.count == 1 }, "a spin that ignored its descriptors would hold the byte for an hour")
        source.invalidate()
    }

    @Test func R20_stopEndsASpinningRun() {
        let loopSlot = Slot<Loop>()
        let worker = TestThread("spin-stop") { () -> Loop.RunResult in
            let loop = Loop.current
            loop.spinBeforeSleeping = Self.spin
            loop.add(keepAlive(), forMode: .default)
            loopSlot.set(loop)
            return loop.run(mode: .default, timeout: Self.spin)
        }
        guard let loop = loopSlot.wait() else {
            Issue.record("the test thread never made its loop")
            return
        }
        // The premise: the run is spinning. A stop that came before the run
        // began would be aimed at no run at all (R20) and prove nothing.
        #expect(eventually { isSpinning(loop) }, "the run never started its spin")
        loop.stop()
        #expect(worker.join() == .stopped, "a stop that waited for the spin would leave the run spinning for an hour")
    }
}
