import CLoopShims
#if canImport(Glibc)
import Glibc
#endif

/// Signal and child-process descriptors: the kernel calls behind
/// `LoopSignalSource` and `LoopProcessSource`.
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
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status }
            if r == -1 && errno == EINTR { continue }
            return nil
        }
    }
}
