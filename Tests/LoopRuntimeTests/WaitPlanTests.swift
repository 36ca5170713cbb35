import Testing
@testable import LoopRuntime

/// The pure half of the sleep decision (R17 step 7): whether a pass may block
/// in the kernel and until when, from facts alone, with no loop and no kernel.
/// The loop gathers the facts under its locks (`Loop.decideWait`); these
/// tests hold the rules the decision itself keeps.
@Suite struct WaitPlanTests {
    private static let t0 = LoopInstant(nanoseconds: 1_000_000_000)
    private static func at(_ ms: UInt64) -> LoopInstant { t0.advanced(by: .milliseconds(ms)) }

    /// Facts under which a pass may sleep until +10 ms, for each test to spoil one at a time.
    private static var sleepy: WaitFacts {
        var facts = WaitFacts(now: t0)
        facts.wake = at(10)
        return facts
    }

    @Test func R17_aPassWithNothingToDoSleepsUntilItsWakeUp() {
        #expect(Self.sleepy.plan == .block(until: Self.at(10)))
        var nothingTimed = Self.sleepy
        nothingTimed.wake = nil
        #expect(nothingTimed.plan == .block(until: nil), "no timer and no timeout: sleep until an event")
    }

    @Test func R17_aPassThatHandledASourceOrOutlivedItsTimeoutOnlyLooks() {
        var facts = Self.sleepy
        facts.mustNotBlock = true
        #expect(facts.plan == .poll)
        #expect(!facts.mayBlockBeforeTimers, "its timers need not be looked at")
    }

    @Test func R19_aWakeUpAskedForBeforeTheDecisionKeepsThePassAwake() {
        var facts = Self.sleepy
        facts.wakeRequested = true
        #expect(facts.plan == .poll)
    }

    @Test func R23_aBlockQueuedBeforeTheDecisionKeepsThePassAwake() {
        var facts = Self.sleepy
        facts.blocksQueued = true
        #expect(facts.plan == .poll)
    }

    @Test func R20_aStoppedRunDoesNotSleep() {
        var facts = Self.sleepy
        facts.stopped = true
        #expect(facts.plan == .poll)
        #expect(!facts.mayBlockBeforeTimers)
    }

    @Test func R9_aSourceAddedSinceTheKernelSetWasBuiltIsWatchedBeforeTheLoopSleeps() {
        var facts = Self.sleepy
        facts.kernelSetChanged = true
        #expect(facts.plan == .poll)
        #expect(!facts.mayBlockBeforeTimers)
    }

    @Test func R14_aManualClockPollsForAWakeUpAlreadyDueAndSleepsForALaterOne() {
        var facts = Self.sleepy
        facts.clockIsManual = true
        #expect(facts.plan == .block(until: Self.at(10)), "due later: sleep until the clock is advanced")
        facts.now = Self.at(10)
        #expect(facts.plan == .poll, "due now on a clock that never moves by itself")
        facts.clockIsManual = false
        #expect(facts.plan == .block(until: Self.at(10)), "the system clock's kernel timer returns at once")
    }

    // MARK: R14: the wake-up the mode's timers ask for

    private static func heap(_ timers: [LoopTimer]) -> TimerHeap {
        var heap = TimerHeap()
        for t in timers { if let e = t.heapEntry() { heap.push(e) } }
        return heap
    }

    private static func timer(_ ms: UInt64, tolerance: Int64 = 0) -> LoopTimer {
        LoopTimer(fireDate: at(ms), tolerance: .milliseconds(tolerance)) { _ in }
    }

    @Test func R14_theWakeUpLiesInEveryEarlierWindowAndNeverBeforeTheFirstDate() {
        var overlapping = Self.heap([Self.timer(10, tolerance: 50), Self.timer(15)])
        #expect(overlapping.wake(isLive: { _ in true }, runDeadline: nil) == Self.at(15), "one wake for both")
        var apart = Self.heap([Self.timer(10, tolerance: 4), Self.timer(15)])
        #expect(apart.wake(isLive: { _ in true }, runDeadline: nil) == Self.at(10))
        var strict = Self.heap([Self.timer(10), Self.timer(12, tolerance: 50)])
        #expect(strict.wake(isLive: { _ in true }, runDeadline: nil) == Self.at(10), "no slack: on the date")
        #expect(strict.wake(isLive: { _ in true }, runDeadline: Self.at(7)) == Self.at(7), "an earlier timeout first")
        var bounded = Self.heap([Self.timer(10, tolerance: 50), Self.timer(15)])
        #expect(bounded.wake(isLive: { _ in true }, runDeadline: Self.at(12)) == Self.at(12), "the timeout has no slack")
        var empty = TimerHeap()
        #expect(empty.wake(isLive: { _ in true }, runDeadline: Self.at(7)) == Self.at(7))
        #expect(empty.wake(isLive: { _ in true }, runDeadline: nil) == nil)
    }

    @Test func R15_anInvalidatedTimerAsksForNoWakeUp() {
        let gone = Self.timer(5)
        let kept = Self.timer(20)
        var heap = Self.heap([gone, kept])
        gone.invalidate()
        let live: (TimerHeap.Entry) -> Bool = { $0.timer.isCurrent($0) }
        #expect(heap.wake(isLive: live, runDeadline: nil) == Self.at(20))
    }
}
