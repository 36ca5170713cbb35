#if canImport(Glibc)
import Glibc
#endif

/// The journal's only door to the kernel: every open, pread, pwrite,
/// fdatasync, ftruncate, rename, unlink and directory fsync of the journal
/// happens in this file.
///
/// Each call retries `EINTR`, captures `errno` at once and throws it as
/// `JournalError.unavailable`; `EBADF` and `EFAULT` trap because they mean we
/// handed the kernel a descriptor or buffer we do not own. Every descriptor is
/// `O_CLOEXEC` so `exec` children never inherit the journal. Files are
/// blocking on purpose: regular files ignore `O_NONBLOCK`, and the journal's
/// whole point is to wait for the disk once per loop pass.
///
/// Loop thread only, like its owner `JobJournal`.
final class JournalFile {
    /// The path this descriptor was opened at (for error messages).
    let path: String
    private let fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit {
        // close(2) on Linux releases the descriptor even when it reports
        // EINTR or EIO, so retrying would risk closing someone else's fd.
        if close(fd) == -1 && errno == EBADF {
            fatalError("close(\(fd)) of journal \(path) on a descriptor that was not open: a journal bug")
        }
    }

    /// Opens an existing file read-write, or creates it (mode 0600) and, when
    /// `truncate`, empties it. Never `O_APPEND`: Linux ignores `pwrite`'s
    /// offset under `O_APPEND`, and we always write at an explicit offset.
    static func open(_ path: String, create: Bool, truncate: Bool = false) throws(JournalError) -> JournalFile {
        var flags = O_RDWR | O_CLOEXEC
        if create { flags |= O_CREAT }
        if truncate { flags |= O_TRUNC }
        let fd = try call("open", path) { Glibc.open(path, flags, 0o600) }
        return JournalFile(path: path, fd: fd)
    }

    /// The file's current size in bytes.
    func size() throws(JournalError) -> Int {
        var info = stat()
        _ = try Self.call("fstat", path) { fstat(fd, &info) }
        return Int(info.st_size)
    }

    /// Reads `count` bytes from `offset` (fewer only at end of file).
    func read(at offset: Int, count: Int) throws(JournalError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            // `withUnsafe…Bytes` rethrows untyped errors, so carry ours out as a Result.
            let n = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(JournalError) in
                    try Self.call("pread", path) { pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done)) }
                }
            }.get()
            if n == 0 { break }
            done += n
        }
        bytes.removeLast(count - done)
        return bytes
    }

    /// Writes all of `bytes` at `offset`, looping over short writes (a disk
    /// that fills mid-call returns a short count, then `ENOSPC`). Returns the
    /// number of `pwrite` calls made, for the group-commit statistics.
    @discardableResult
    func write(_ bytes: [UInt8], at offset: Int) throws(JournalError) -> Int {
        var done = 0
        var calls = 0
        while done < bytes.count {
            calls += 1
            let n = try bytes.withUnsafeBytes { raw in
                Result { () throws(JournalError) in
                    try Self.call("pwrite", path) { pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done)) }
                }
            }.get()
            done += n
        }
        return calls
    }

    /// `fdatasync(2)`: the data and the size that reaches it are on stable
    /// storage when this returns. (An append changes the size, which
    /// fdatasync does flush; it skips only timestamps.)
    func sync() throws(JournalError) {
        _ = try Self.call("fdatasync", path) { fdatasync(fd) }
    }

    /// `ftruncate(2)` to `length` bytes. Shrinking never needs free space,
    /// so this works on a full disk.
    func truncate(to length: Int) throws(JournalError) {
        _ = try Self.call("ftruncate", path) { ftruncate(fd, off_t(length)) }
    }

    /// Atomically replaces `to` with `from` (`rename(2)`).
    static func rename(_ from: String, over to: String) throws(JournalError) {
        _ = try call("rename", to) { Glibc.rename(from, to) }
    }

    /// Removes `path`; a file that is already gone is not an error.
    static func removeIfPresent(_ path: String) throws(JournalError) {
        if unlink(path) == -1 {
            let code = errno
            if code != ENOENT { throw JournalError.unavailable(errno: code, path: path) }
        }
    }

    /// Whether `path` exists (any type).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Creates `path` and any missing parents with mode 0700. When `sync`,
    /// fsyncs the parent of each directory it creates, so the state
    /// directory itself cannot vanish in a crash after a commit.
    static func makeDirectories(_ path: String, sync: Bool) throws(JournalError) {
        var parent = path.hasPrefix("/") ? "/" : "."
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) == 0 {
                if sync { try syncDirectory(parent) }
            } else {
                let code = errno
                if code != EEXIST { throw JournalError.unavailable(errno: code, path: prefix) }
            }
            parent = prefix
            prefix += "/"
        }
    }

    /// `fsync(2)` on a directory, making a rename or creation in it durable.
    static func syncDirectory(_ path: String) throws(JournalError) {
        let fd = try call("open", path) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        _ = try call("fsync", path) { fsync(fd) }
    }

    /// Wall-clock time in Unix milliseconds: the journal's default clock.
    static func unixMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Runs one kernel call that returns -1 on failure: retries `EINTR`,
    /// traps on `EBADF`/`EFAULT` (our bug), throws any other errno.
    private static func call<T: FixedWidthInteger>(
        _ name: StaticString, _ path: String, _ body: () -> T
    ) throws(JournalError) -> T {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = Glibc.errno
            switch code {
            case EINTR:
                continue
            case EBADF, EFAULT:
                fatalError("\(name) on journal \(path) got a bad descriptor or address (errno \(code)): a journal bug")
            default:
                throw JournalError.unavailable(errno: code, path: path)
            }
        }
    }
}
