import Testing
@testable import LoopRuntime
@testable import LoopdCore

/// loopd's lane mailbox on a loop whose kernel the test plays: which
/// reports wake the main loop and which wait for a request or its lag
/// timer, told by what the loop asked of the kernel, with no real time.
/// (It lives beside the scripted kernel, which only this target has.)
@Suite struct LaneMailboxKernelTests {
    /// A mailbox on the calling thread's loop, whose takes count the reports
    /// they find, as the scheduler's take records them.
    private final class Main: @unchecked Sendable {
        private(set) var mailbox: LaneMailbox!
        let taken = Counter()

        init(loop: Loop) {
            mailbox = LaneMailbox(mainLoop: loop) { [unowned self] in
                var reports: [LaneReport] = []
                if mailbox.takeAll(swappingWith: &reports) { for _ in reports { taken.increment() } }
            }
        }
    }

    /// What a lane reports; the mailbox does not look inside.
    private static let report = LaneReport.flush([])

    @Test func aLazyReportLeavesTheMainLoopAsleepUntilItsLagTimerFires() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let (takenWhileAsleep, taken, result) = withScriptedLoop(kernel) { loop -> (Int?, Int, Loop.RunResult) in
            let main = Main(loop: loop)
            let takenWhileAsleep = Slot<Int>()
            kernel.script(
                .meanwhile { main.mailbox.post(Self.report, urgent: false) },
                .meanwhile { takenWhileAsleep.set(main.taken.count) },
                .readable(main.mailbox.lagDescriptor),
                .meanwhile { loop.stop() })
            let result = loop.run(mode: .default, timeout: nil)
            return (takenWhileAsleep.value, main.taken.count, result)
        }
        #expect(takenWhileAsleep == 0, "the post did not end the loop's wait")
        #expect(kernel.waits == [nil, nil], "one wake-up, the lag timer's; then asleep until stopped")
        #expect(taken == 1)
        #expect(result == .stopped)
        #expect(kernel.unusedSteps == 0)
    }

    @Test func anUrgentReportWakesTheMainLoopAtOnce() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let (takenBySecondWait, armed) = withScriptedLoop(kernel) { loop -> (Int?, Bool) in
            let main = Main(loop: loop)
            let takenBySecondWait = Slot<Int>()
            kernel.script(
                .meanwhile { main.mailbox.post(Self.report, urgent: true) },
                .meanwhile { takenBySecondWait.set(main.taken.count) },
                .meanwhile { loop.stop() })
            loop.run(mode: .default, timeout: nil)
            return (takenBySecondWait.value, main.mailbox.lagIsArmed)
        }
        #expect(takenBySecondWait == 1, "taken in the pass the post woke, before the loop slept again")
        #expect(!armed, "an urgent report needs no lag timer")
        #expect(kernel.waits == [nil, nil], "one wake-up, the post's; then asleep until stopped")
    }

    @Test func whileEveryReportIsWantedALazyOneWakesTheMainLoopAndArmsNoTimer() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let (takenBySecondWait, armed) = withScriptedLoop(kernel) { loop -> (Int?, Bool) in
            let main = Main(loop: loop)
            main.mailbox.wantEveryReport(.waiters, true)  // a `wait` is parked
            let takenBySecondWait = Slot<Int>()
            let armed = Slot<Bool>()
            kernel.script(
                .meanwhile {
                    main.mailbox.post(Self.report, urgent: false)
                    armed.set(main.mailbox.lagIsArmed)
                },
                .meanwhile { takenBySecondWait.set(main.taken.count) },
                .meanwhile { loop.stop() })
            loop.run(mode: .default, timeout: nil)
            return (takenBySecondWait.value, armed.value ?? true)
        }
        #expect(takenBySecondWait == 1)
        #expect(!armed, "urgent from the start: no timer armed only to be overtaken")
    }

    @Test func aLazyReportWaitsThroughOtherWakeUpsForItsLagTimerAtMost() {
        let kernel = ScriptedKernel(clock: ManualClock())
        let fd: Int32 = 1002  // never opened: only the scripted kernel sees it
        let (takenWhenTheSourceRan, taken, result) = withScriptedLoop(kernel) { loop -> (Int?, Int, Loop.RunResult) in
            let main = Main(loop: loop)
            let takenWhenTheSourceRan = Slot<Int>()
            // Something that reads no job's state (a timer of its own, say)
            // wakes the loop: the report stays for the next request, and
            // the lag timer armed by its post still bounds its wait.
            let source = LoopFileDescriptorSource(fileDescriptor: fd) { _ in
                takenWhenTheSourceRan.set(main.taken.count)
            }
            loop.add(source, forMode: .default)
            kernel.script(
                .meanwhile { main.mailbox.post(Self.report, urgent: false) },
                .readable(fd),
                .readable(main.mailbox.lagDescriptor),
                .meanwhile { loop.stop() })
            let result = loop.run(mode: .default, timeout: nil)
            source.invalidate()
            return (takenWhenTheSourceRan.value, main.taken.count, result)
        }
        #expect(takenWhenTheSourceRan == 0, "a pass took the report: the main loop's passes do mailbox work")
        #expect(taken == 1, "the lag timer took it")
        #expect(kernel.waits == [nil, nil, nil])
        #expect(result == .stopped)
        #expect(kernel.unusedSteps == 0)
    }
}
