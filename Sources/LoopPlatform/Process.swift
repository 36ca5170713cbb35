import Glibc

/// Whether process `pid` exists (kill(2) with signal 0; a process of
/// another user that may not be signalled still exists).
public func processExists(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0 || errno == EPERM
}

/// When process `pid` started, in Unix milliseconds (to the kernel's clock
/// tick, from a boot time known to the second); nil if it is gone or
/// /proc cannot tell.
public func processStartedAtUnixMilliseconds(_ pid: pid_t) -> Int64? {
    guard case .success(let stat) = FileSystem.readFile("/proc/\(pid)/stat", limit: 4096),
          case .success(let system) = FileSystem.readFile("/proc/stat", limit: 1 << 20) else { return nil }
    // Fields after the command, which may hold spaces and parentheses:
    // state is field 3, starttime (clock ticks after boot) field 22.
    guard let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
    guard fields.count > 19, let ticks = Int64(String(decoding: fields[19], as: UTF8.self)) else { return nil }
    let bootLine = String(decoding: system, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("btime ") }
    guard let boot = bootLine.flatMap({ Int64($0.dropFirst("btime ".count)) }) else { return nil }
    let hertz = Int64(sysconf(Int32(_SC_CLK_TCK)))
    guard hertz > 0 else { return nil }
    return boot * 1000 + ticks * 1000 / hertz
}

/// The command name of process `pid` as /proc/PID/comm gives it (at most
/// 15 bytes); nil if it is gone or /proc cannot tell.
public func processName(_ pid: pid_t) -> String? {
    guard case .success(let comm) = FileSystem.readFile("/proc/\(pid)/comm", limit: 64) else { return nil }
    return String(decoding: comm.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
}

/// This host's name (gethostname(2)); nil if it cannot be read.
public func hostName() -> String? {
    var name = [CChar](repeating: 0, count: 256)
    guard gethostname(&name, name.count - 1) == 0 else { return nil }
    return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The process's real uid.
public func currentUID() -> UInt32 { getuid() }

/// The process's effective uid: whom its own permission checks admit.
public func effectiveUserID() -> UInt32 { geteuid() }

/// Wall-clock Unix time in milliseconds.
public func unixMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// Blocks the calling thread, whichever it is, for `milliseconds` (usleep,
/// a second at a time: POSIX lets usleep refuse a million microseconds).
public func blockThread(milliseconds: Int64) {
    var left = milliseconds
    while left > 0 {
        let step = min(left, 1000)
        usleep(UInt32(step) * 1000)
        left -= step
    }
}

/// The process environment as a dictionary.
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p += 1
        }
        return out
    }
}

/// Writes log bytes to `fd` (stderr) with one write(2), best effort: a log
/// line that cannot be written is dropped rather than holding up the loop.
public func writeLogBytes(_ fd: Int32, _ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
}

/// Writes all of `text` to `fd` (1 or 2) unbuffered, retrying short writes
/// and `EINTR`; gives up on another error (`EPIPE`: the reader has gone),
/// and returns false then. Unbuffered, so nothing is lost when the process
/// exits right after.
@discardableResult
public func writeStandard(_ fd: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset) }
        if n > 0 { offset += n } else if n == -1 && errno == EINTR { continue } else { return false }
    }
    return true
}

/// The process environment variable `name`.
public func environmentVariable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

/// Ends the process with `status` (exit(3): atexit handlers run, stdio is
/// flushed). Main thread, once: exit(3) must not race another exit.
public func exitProcess(_ status: Int32) -> Never {
    exit(status)
}

/// Ends the process at once with `status` (_exit(2)): no atexit handlers,
/// no stdio flush. Any thread, and async-signal-safe: for a watchdog or a
/// signal handler that must not wait on anything the process holds.
public func exitImmediately(_ status: Int32) -> Never {
    _exit(status)
}

/// The process's scheduling policy (sched_getscheduler(2)): `SCHED_OTHER`,
/// or a real-time `SCHED_FIFO`/`SCHED_RR` given by `chrt`; -1 if unknown.
public func schedulingPolicy() -> Int32 { sched_getscheduler(0) }

/// The process's nice value (getpriority(2), `PRIO_PROCESS`), -20 to 19.
public func niceValue() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
