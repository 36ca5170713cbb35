import Glibc

/// The daemon's own uid.
func currentUID() -> UInt32 { getuid() }

/// The process id.
func currentPID() -> Int32 { getpid() }

/// Wall-clock Unix time in milliseconds.
func unixMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// Monotonic nanoseconds.
func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Blocks the calling thread, whichever it is, for `milliseconds` (usleep,
/// a second at a time: POSIX lets usleep refuse a million microseconds).
func blockThread(milliseconds: Int64) {
    var left = milliseconds
    while left > 0 {
        let step = min(left, 1000)
        usleep(UInt32(step) * 1000)
        left -= step
    }
}

/// The process environment as a dictionary.
enum ProcessEnvironment {
    static func current() -> [String: String] {
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
func writeLogBytes(_ fd: Int32, _ bytes: [UInt8]) {
    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
}

/// Ends the process with `status` (exit(3): atexit handlers run, stdio is
/// flushed). Main thread, once: exit(3) must not race another exit.
func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
