import LoopPlatform
import Testing
@testable import LoopRuntime

/// A kernel a test plays: a `LoopBackend` with no descriptors and no real
/// time, so a test steps a loop through its passes and says what the kernel
/// reports while the loop sleeps.
///
/// Each blocking wait takes the next `Step` of the script, and more while a
/// step leaves nothing to report (as the kernel keeps a loop asleep). What
/// is already pending (a wake-up, a readable descriptor the loop watches, an
/// expired timer) is reported at once instead, by a wait or a poll, without
/// taking a step. A readable descriptor is reported once, as if its handler
/// read it; one the loop does not watch stays readable until it does (R5).
/// A wait with the script spent is a test error, and so is a loop that only
/// polls, pass after pass: each is recorded, and the run is stopped so that
/// the test ends instead of hanging.
///
/// Time is the `ManualClock` the kernel is made with, which the loop must
/// run on: an expiring timer moves it, and the advance wakes the loop as a
/// manual clock always does.
final class ScriptedKernel: LoopBackend, @unchecked Sendable {
    /// What happens while the loop blocks.
    enum Step: Sendable {
        /// The wake-up timer expires: the clock moves to the instant the
        /// loop asked to be woken at.
        case timerExpires
        /// The clock moves to `instant` and the timer reports an expiry: an
        /// early one when `instant` is before what the loop asked for.
        case timerExpiresAt(LoopInstant)
        /// `fd` becomes readable.
        case readable(Int32)
        /// Another thread acts (a perform, a `wakeUp()`, a `stop()`): the
        /// step runs `body` on a thread of its own and waits for it.
        case meanwhile(@Sendable () -> Void)
    }

    /// What the loop asked of the kernel, in order.
    enum Call: Equatable, CustomStringConvertible {
        case poll
        case wait(until: LoopInstant?)

        var description: String {
            switch self {
            case .poll: "poll"
            case .wait(let until): "wait(until: \(until.map { "\($0)" } ?? "nil"))"
            }
        }
    }

    private struct State {
        var script: [Step]
        var calls: [Call] = []
        var watched: [Int32: (interest: IOInterest, token: UInt64)] = [:]
        var readable: Set<Int32> = []
        var woken = false
        var timerExpired = false
        var pollsInARow = 0
    }

    let clock: ManualClock
    private let state: Guarded<State>  // any thread: wakers call `wake()`

    init(clock: ManualClock, script: [Step] = []) {
        self.clock = clock
        state = Guarded(State(script: script))
    }

    /// Appends steps for the waits to come.
    func script(_ steps: Step...) { state.withLock { $0.script += steps } }

    var calls: [Call] { state.withLock { $0.calls } }
    /// The instants the loop blocked until, one per blocking wait.
    var waits: [LoopInstant?] { calls.compactMap { if case .wait(let until) = $0 { until } else { nil } } }
    var unusedSteps: Int { state.withLock { $0.script.count } }
    /// Forgets the calls so far (those of setting a loop up).
    func forgetCalls() { state.withLock { $0.calls.removeAll() } }

    // MARK: LoopBackend

    func watch(_ fd: Int32, interest: IOInterest, token: UInt64) throws(PlatformError) {
        state.withLock { $0.watched[fd] = (interest, token) }
    }

    func rewatch(_ fd: Int32, interest: IOInterest, token: UInt64) throws(PlatformError) {
        state.withLock { $0.watched[fd] = (interest, token) }
    }

    func unwatch(_ fd: Int32) {
        _ = state.withLock { $0.watched.removeValue(forKey: fd) }
    }

    func poll(into events: inout [ReadinessEvent]) {
        let spinning = state.withLock { s -> Bool in
            s.calls.append(.poll)
            s.pollsInARow += 1
            return s.pollsInARow == 10_000
        }
        if spinning {
            Issue.record("the loop polled 10000 times without blocking")
            Loop.current.stop()
        }
        report(into: &events)
    }

    func wait(until deadline: LoopInstant?, on clock: LoopClock, into events: inout [ReadinessEvent]) {
        state.withLock { s in
            s.calls.append(.wait(until: deadline))
            s.pollsInARow = 0
        }
        while !report(into: &events) {
            guard let step = state.withLock({ $0.script.isEmpty ? nil : $0.script.removeFirst() }) else {
                Issue.record("the loop blocked with the script spent, after \(calls)")
                // Stop the run, and return from this wait even if waking is what is broken.
                Loop.current.stop()
                state.withLock { $0.woken = true }
                continue
            }
            switch step {
            case .timerExpires:
                guard let deadline else {
                    Issue.record("a timer expiry scripted for a wait without a deadline")
                    continue
                }
                expire(at: deadline)
            case .timerExpiresAt(let instant):
                expire(at: instant)
            case .readable(let fd):
                _ = state.withLock { $0.readable.insert(fd) }
            case .meanwhile(let body):
                _ = TestThread("scripted-kernel", body).join()
            }
        }
    }

    func wake() {
        state.withLock { $0.woken = true }
    }

    // MARK: the kernel's side

    /// Moves the clock (outside the lock: advancing wakes the loop through
    /// `wake()`) and marks the timer expired.
    private func expire(at instant: LoopInstant) {
        clock.advance(to: instant)
        state.withLock { $0.timerExpired = true }
    }

    /// Appends what is pending and clears it; returns whether there was anything.
    @discardableResult
    private func report(into events: inout [ReadinessEvent]) -> Bool {
        state.withLock { s in
            var any = false
            if s.woken {
                events.append(ReadinessEvent(token: Loop.wakeToken, readable: true, writable: false, hangup: false))
                s.woken = false
                any = true
            }
            if s.timerExpired {
                events.append(ReadinessEvent(token: Loop.timerToken, readable: true, writable: false, hangup: false))
                s.timerExpired = false
                any = true
            }
            for fd in s.readable.sorted() {
                guard let w = s.watched[fd], w.interest.contains(.readable) else { continue }
                events.append(ReadinessEvent(token: w.token, readable: true, writable: false, hangup: false))
                s.readable.remove(fd)
                any = true
            }
            return any
        }
    }
}

/// Runs `body` on a thread of its own whose loop runs over `kernel`, on the
/// kernel's manual clock, and returns what it returns. The kernel's calls
/// start empty when `body` starts.
func withScriptedLoop<T: Sendable>(_ kernel: ScriptedKernel, _ body: @escaping @Sendable (Loop) -> T) -> T {
    onThread("scripted-loop") {
        let loop = LoopRegistry.shared.makeCurrentLoop(backend: kernel)
        useManualClock(kernel.clock, on: loop)
        kernel.forgetCalls()
        return body(loop)
    }
}
