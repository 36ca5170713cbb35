import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Signal and child-process descriptors: the kernel calls behind
/// `LoopSignalSource` and `LoopProcessSource`; and plain signals: sending
/// them, ignoring them, handling them.
public enum SignalPlatform {
    public static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        cloop_sigset_empty(&set)
        for s in signals { cloop_sigset_add(&set, s) }
        return set
    }

    /// Blocks `signals` in the calling thread (threads it starts inherit the mask).
    public static func block(_ signals: [Int32]) {
        var set = signalSet(signals)
        let r = pthread_sigmask(SIG_BLOCK, &set, nil)
        precondition(r == 0, "pthread_sigmask failed: \(r)")
    }

    public static func openSignalFD(_ signals: [Int32]) throws(PlatformError) -> Int32 {
        var set = signalSet(signals)
        return try retryingInterrupts("signalfd") { signalfd(-1, &set, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
    }

    /// Reads every pending signal from a signalfd.
    public static func readSignals(_ fd: Int32) -> [Int32] {
        var out: [Int32] = []
        var info = signalfd_siginfo()
        while true {
            let n = read(fd, &info, MemoryLayout<signalfd_siginfo>.size)
            if n == MemoryLayout<signalfd_siginfo>.size {
                out.append(Int32(info.ssi_signo))
                continue
            }
            if n == -1 && errno == EINTR { continue }
            return out
        }
    }

    public static func openPidFD(_ pid: pid_t) throws(PlatformError) -> Int32 {
        try retryingInterrupts("pidfd_open") { cloop_pidfd_open(pid, 0) }
    }

    /// Sends `signal` to the process behind a pidfd (no pid-reuse race).
    public static func sendSignal(pidfd: Int32, _ signal: Int32) throws(PlatformError) {
        _ = try retryingInterrupts("pidfd_send_signal") { cloop_pidfd_send_signal(pidfd, signal) }
    }

    /// Reaps the exited child `pid` without blocking; nil if it has not exited
    /// (or was reaped by someone else: ECHILD).
    public static func reap(_ pid: pid_t) -> Int32? {
        (try? reapIfExited(pid)) ?? nil
    }

    /// What a reaped child used, as wait4(2) reports it: CPU time in
    /// microseconds, of the child and of the descendants it waited for.
    /// (Not its peak memory: a child spawned sharing the parent's memory,
    /// as contained children are, is charged the parent's resident set.)
    public struct ReapedUsage: Sendable, Equatable {
        public var userMicroseconds: UInt64
        public var systemMicroseconds: UInt64
    }

    /// Reaps the exited child `pid` without blocking (wait4(2), `WNOHANG`),
    /// with what it used; nil if it has not exited (or is not ours to reap).
    public static func reapWithUsage(_ pid: pid_t) -> (status: Int32, usage: ReapedUsage)? {
        var status: Int32 = 0
        var usage = rusage()
        guard cloop_reap_with_usage(pid, &status, &usage) == 1 else { return nil }
        func us(_ t: timeval) -> UInt64 { UInt64(max(0, t.tv_sec)) * 1_000_000 + UInt64(max(0, t.tv_usec)) }
        return (status, ReapedUsage(userMicroseconds: us(usage.ru_utime), systemMicroseconds: us(usage.ru_stime)))
    }

    /// The wait status of child `pid` if it has ended, leaving it unreaped
    /// (waitid(2), `WNOWAIT`): until `reapWithUsage`, its pid and process
    /// group id cannot be given to another process. nil while it runs.
    public static func endedWithoutReaping(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        return cloop_ended_without_reaping(pid, &status) == 1 ? status : nil
    }

    /// Reaps the child `pid` if it has exited (waitpid(2), `WNOHANG`): its
    /// wait status, or nil while it runs. Throws `ECHILD` when `pid` is not
    /// a child of this process, or was reaped already.
    public static func reapIfExited(_ pid: pid_t) throws(PlatformError) -> Int32? {
        var status: Int32 = 0
        let r = try retryingInterrupts("waitpid", detail: "\(pid)") { waitpid(pid, &status, WNOHANG) }
        return r == pid ? status : nil
    }

    /// Sends `signal` to process `pid` (kill(2)), best effort: a process
    /// that is already gone is not an error. Async-signal-safe (allocates
    /// nothing), so a signal handler may call it.
    public static func sendSignal(_ signal: Int32, toProcess pid: pid_t) {
        _ = kill(pid, signal)
    }

    /// Ignores `signal` from now on, in every thread (`SIG_IGN`), e.g.
    /// SIGPIPE for a process that writes to sockets with write(2).
    public static func ignore(_ signal: Int32) {
        _ = Glibc.signal(signal, SIG_IGN)
    }

    /// Runs `handler` whenever one of `signals` arrives (signal(2), glibc's
    /// semantics: the handler stays installed and interrupted calls restart).
    /// It runs on whichever thread the signal hits, between any two
    /// instructions, so it may only make async-signal-safe calls.
    public static func installHandler(for signals: [Int32], _ handler: @convention(c) (Int32) -> Void) {
        for s in signals { _ = Glibc.signal(s, handler) }
    }

    /// Puts `signal` back to its default action and raises it in the calling
    /// thread: for a handler that has cleaned up and now lets the process
    /// end of that signal as it would have. Async-signal-safe.
    public static func raiseWithDefaultAction(_ signal: Int32) {
        _ = Glibc.signal(signal, SIG_DFL)
        _ = raise(signal)
    }
}
