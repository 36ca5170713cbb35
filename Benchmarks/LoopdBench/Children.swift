// The children (loopd, redis-server, redis-benchmark, perf) die with the
// benchmark: on every fatal signal, and when the whole run overruns.
import LoopPlatform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The children alive now, readable from a signal handler (lock-free atomics).
enum Children {
    static let loopd = Atomic<Int32>(0)
    /// The second loopd, with the opt-in spin (the `seq1spin` row).
    static let loopdSpin = Atomic<Int32>(0)
    static let redis = Atomic<Int32>(0)
    static let helper = Atomic<Int32>(0)
    /// beanstalkd, the reference of the priorities row.
    static let beanstalkd = Atomic<Int32>(0)
    /// `perf stat`, counting a measured window's wake-ups.
    static let perf = Atomic<Int32>(0)

    /// SIGKILLs every registered child. Async-signal-safe.
    static func killAll() {
        let a = loopd.load(ordering: .relaxed), b = redis.load(ordering: .relaxed), c = helper.load(ordering: .relaxed)
        let d = loopdSpin.load(ordering: .relaxed), e = beanstalkd.load(ordering: .relaxed)
        let f = perf.load(ordering: .relaxed)
        if f > 0 { SignalPlatform.sendSignal(SIGKILL, toProcess: f) }
        if e > 0 { SignalPlatform.sendSignal(SIGKILL, toProcess: e) }
        if a > 0 { SignalPlatform.sendSignal(SIGKILL, toProcess: a) }
        if d > 0 { SignalPlatform.sendSignal(SIGKILL, toProcess: d) }
        if b > 0 { SignalPlatform.sendSignal(SIGKILL, toProcess: b) }
        if c > 0 { SignalPlatform.sendSignal(SIGKILL, toProcess: c) }
    }

    /// Kills the children on any fatal signal (a Swift trap is SIGILL or
    /// SIGTRAP), then dies of that signal as it would have; ignores SIGPIPE.
    static func installEmergencyHandlers() {
        _ = (loopd.load(ordering: .relaxed), redis.load(ordering: .relaxed), helper.load(ordering: .relaxed),
             loopdSpin.load(ordering: .relaxed), beanstalkd.load(ordering: .relaxed), perf.load(ordering: .relaxed))
        SignalPlatform.ignore(SIGPIPE)
        SignalPlatform.installHandler(for: [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE]) { sig in
            Children.killAll()
            SignalPlatform.raiseWithDefaultAction(sig)
        }
    }

    /// A thread that kills the children and exits with status 3 if the whole
    /// run has not finished after `seconds`.
    static func startWatchdog(seconds: Double, finished: Watchdog) {
        finished.deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        NativeThread(name: "bench-watchdog") {
            while !finished.done.load(ordering: .acquiring) {
                if monotonicNanoseconds() >= finished.deadline {
                    writeStandard(2, "\nLoopdBench: the run exceeded its time limit; killing loopd and redis\n")
                    Children.killAll()
                    exitImmediately(3)
                }
                blockThread(milliseconds: 50)
            }
        }.detach()
    }
}

/// The watchdog's state: its deadline (set before the thread starts) and
/// whether the run is over.
final class Watchdog: @unchecked Sendable {
    var deadline: UInt64 = 0
    let done = Atomic<Bool>(false)
}
