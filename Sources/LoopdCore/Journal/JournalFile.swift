import LoopPlatform

/// One journal file, and the path calls the journal makes (rename, remove,
/// create and fsync directories). The calls themselves are Platform's
/// (`FileSystem`, `Descriptor`): they retry `EINTR`, and every descriptor is
/// `O_CLOEXEC` and blocking, since the journal's whole point is to wait for
/// the disk once per loop pass. Here their errno becomes
/// `JournalError.unavailable`; `EBADF` and `EFAULT` trap instead, because
/// they mean we handed the kernel a descriptor or buffer we do not own.
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
        // close(2) is never retried (see `Descriptor.close`); of its errors
        // only EBADF, a descriptor that was not open, is our bug.
        if let error = Descriptor.close(fd), error.isCallerBug {
            fatalError("close(\(fd)) of journal \(path) on a descriptor that was not open: a journal bug")
        }
    }

    /// Opens an existing file read-write, or creates it (mode 0600) and, when
    /// `truncate`, empties it. Never `O_APPEND`: Linux ignores `pwrite`'s
    /// offset under `O_APPEND`, and we always write at an explicit offset.
    static func open(_ path: String, create: Bool, truncate: Bool = false) throws(JournalError) -> JournalFile {
        let fd = try call(path) { () throws(PlatformError) in
            try FileSystem.open(path, .readWrite(create: create, truncate: truncate))
        }
        return JournalFile(path: path, fd: fd)
    }

    /// The file's current size in bytes.
    func size() throws(JournalError) -> Int {
        try Self.call(path) { () throws(PlatformError) in try Descriptor.status(fd).size }
    }

    /// Reads `count` bytes from `offset` (fewer only at end of file).
    func read(at offset: Int, count: Int) throws(JournalError) -> [UInt8] {
        try Self.call(path) { () throws(PlatformError) in try Descriptor.read(fd, count: count, at: offset) }
    }

    /// Writes all of `bytes` at `offset`, looping over short writes (a disk
    /// that fills mid-call returns a short count, then `ENOSPC`). Returns the
    /// number of `pwrite` calls made, for the group-commit statistics.
    @discardableResult
    func write(_ bytes: [UInt8], at offset: Int) throws(JournalError) -> Int {
        try Self.call(path) { () throws(PlatformError) in try Descriptor.write(fd, bytes, at: offset) }
    }

    /// `fdatasync(2)`: the data and the size that reaches it are on stable
    /// storage when this returns. (An append changes the size, which
    /// fdatasync does flush; it skips only timestamps.)
    func sync() throws(JournalError) {
        try Self.call(path) { () throws(PlatformError) in try Descriptor.syncData(fd) }
    }

    /// `ftruncate(2)` to `length` bytes. Shrinking never needs free space,
    /// so this works on a full disk.
    func truncate(to length: Int) throws(JournalError) {
        try Self.call(path) { () throws(PlatformError) in try Descriptor.truncate(fd, to: length) }
    }

    /// Atomically replaces `to` with `from` (`rename(2)`).
    static func rename(_ from: String, over to: String) throws(JournalError) {
        try call(to) { () throws(PlatformError) in try FileSystem.rename(from, over: to) }
    }

    /// Removes `path`; a file that is already gone is not an error.
    static func removeIfPresent(_ path: String) throws(JournalError) {
        do {
            try FileSystem.removeIfPresent(path)
        } catch {
            throw JournalError.unavailable(errno: error.errno, path: path)
        }
    }

    /// Whether `path` exists (any type).
    static func exists(_ path: String) -> Bool {
        FileSystem.exists(path)
    }

    /// Creates `path` and any missing parents with mode 0700. When `sync`,
    /// fsyncs the parent of each directory it creates, so the state
    /// directory itself cannot vanish in a crash after a commit.
    static func makeDirectories(_ path: String, sync: Bool) throws(JournalError) {
        var parent = path.hasPrefix("/") ? "/" : "."
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            let created: Bool
            do {
                created = try FileSystem.makeDirectory(prefix, mode: 0o700)
            } catch {
                throw JournalError.unavailable(errno: error.errno, path: prefix)
            }
            if created && sync { try syncDirectory(parent) }
            parent = prefix
            prefix += "/"
        }
    }

    /// `fsync(2)` on a directory, making a rename or creation in it durable.
    static func syncDirectory(_ path: String) throws(JournalError) {
        try call(path) { () throws(PlatformError) in try FileSystem.syncDirectory(path) }
    }

    /// Runs one Platform call on the journal at `path`: traps on
    /// `EBADF`/`EFAULT` (our bug), throws any other errno as `unavailable`.
    private static func call<T>(_ path: String, _ body: () throws(PlatformError) -> T) throws(JournalError) -> T {
        do {
            return try body()
        } catch {
            if error.isCallerBug {
                fatalError("\(error.call) on journal \(path) got a bad descriptor or address (errno \(error.errno)): a journal bug")
            }
            throw JournalError.unavailable(errno: error.errno, path: path)
        }
    }
}
