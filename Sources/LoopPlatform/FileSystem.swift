import Glibc

/// Calls on paths: opening, reading, renaming, removing and creating files
/// and directories. Every descriptor is `O_CLOEXEC`, so `exec` children
/// never inherit one, and blocking: regular files ignore `O_NONBLOCK`. Each
/// throwing call retries EINTR and throws the errno with the path. Any
/// thread; nothing here keeps state.
public enum FileSystem {
    /// How `open` opens a file.
    public enum OpenMode {
        case readOnly
        /// Read-write, never `O_APPEND` (Linux ignores pwrite's offset under
        /// it); `create` makes a missing file with mode 0600, `truncate` empties it.
        case readWrite(create: Bool, truncate: Bool)
        /// Write-only, every write at the end (`O_APPEND`), made with mode 0600
        /// if missing: a log that several writers, such as children handed the
        /// descriptor, share without overwriting each other.
        case append
        /// Write-only, no creation, no truncation: a kernel interface file
        /// such as a cgroup's, which refuses other opens.
        case writeOnly
    }

    /// open(2) of `path`; the caller closes the descriptor (`Descriptor.close`).
    public static func open(_ path: String, _ mode: OpenMode) throws(PlatformError) -> Int32 {
        var flags = O_CLOEXEC
        switch mode {
        case .readOnly:
            flags |= O_RDONLY
        case let .readWrite(create, truncate):
            flags |= O_RDWR
            if create { flags |= O_CREAT }
            if truncate { flags |= O_TRUNC }
        case .append:
            flags |= O_WRONLY | O_CREAT | O_APPEND
        case .writeOnly:
            flags |= O_WRONLY
        }
        return try retryingInterrupts("open", detail: path) { Glibc.open(path, flags, 0o600) }
    }

    /// Atomically replaces `to` with `from` (rename(2)).
    public static func rename(_ from: String, over to: String) throws(PlatformError) {
        _ = try retryingInterrupts("rename", detail: to) { Glibc.rename(from, to) }
    }

    /// unlink(2) of `path`; a file that is already gone is not an error.
    public static func removeIfPresent(_ path: String) throws(PlatformError) {
        do {
            _ = try retryingInterrupts("unlink", detail: path) { unlink(path) }
        } catch where error.errno == ENOENT {
        }
    }

    /// Whether `path` exists, of any type (stat(2)).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The working directory (getcwd(3)); "/" if it cannot be read.
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `path` is a directory (stat(2), following links).
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether this process may read `path` (access(2), R_OK).
    public static func isReadable(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }

    /// Whether this process may make and remove entries in the directory
    /// `path` (access(2), W_OK and X_OK).
    public static func isWritableDirectory(_ path: String) -> Bool {
        access(path, W_OK | X_OK) == 0
    }

    /// Whether this process may execute `path` (access(2), X_OK).
    public static func isExecutable(_ path: String) -> Bool {
        access(path, X_OK) == 0
    }

    /// The target a symbolic link holds (readlink(2)), e.g. the executable
    /// behind `/proc/self/exe`.
    public static func symbolicLinkTarget(_ path: String) throws(PlatformError) -> String {
        var size = 4096
        while true {
            var buffer = [UInt8](repeating: 0, count: size)
            let n = try retryingInterrupts("readlink", detail: path) {
                buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
            }
            // A full buffer may have cut the target short: try a larger one.
            if n < size { return String(decoding: buffer[0..<n], as: UTF8.self) }
            size *= 2
        }
    }

    /// The names in directory `path` (opendir, readdir), without `.` and `..`,
    /// in the order the file system keeps them.
    public static func directoryEntries(_ path: String) throws(PlatformError) -> [String] {
        var opened: OpaquePointer?
        _ = try retryingInterrupts("opendir", detail: path) { () -> Int32 in
            opened = opendir(path)
            return opened == nil ? -1 : 0
        }
        guard let stream = opened else { return [] }  // never: opendir failed and threw
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw PlatformError(call: "readdir", errno: errno, detail: path) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Makes a new directory `base/prefixXXXXXX`, the X's replaced so that
    /// the name is unused, with mode 0700 (mkdtemp(3)); returns its path.
    public static func makeTemporaryDirectory(in base: String, prefix: String) throws(PlatformError) -> String {
        var template = Array((base + "/" + prefix + "XXXXXX").utf8CString)
        _ = try retryingInterrupts("mkdtemp", detail: base) {
            template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) == nil ? -1 : 0 }
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// mkdir(2) of `path` with `mode`; false when something already exists there.
    public static func makeDirectory(_ path: String, mode: UInt32) throws(PlatformError) -> Bool {
        do {
            _ = try retryingInterrupts("mkdir", detail: path) { mkdir(path, mode_t(mode)) }
            return true
        } catch where error.errno == EEXIST {
            return false
        }
    }

    /// fsync(2) of the directory `path`, making a rename or a creation in it
    /// durable.
    public static func syncDirectory(_ path: String) throws(PlatformError) {
        let fd = try retryingInterrupts("open", detail: path) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { Descriptor.close(fd) }
        _ = try retryingInterrupts("fsync", detail: path) { fsync(fd) }
    }

    /// Why `readFile` failed.
    public enum ReadFailure: Error {
        case errno(Int32)
        case tooLarge
    }

    /// Reads a whole file, refusing anything over `limit` bytes (a config is a
    /// few kilobytes; a huge file is a mistake such as pointing at a log).
    public static func readFile(_ path: String, limit: Int) -> Result<[UInt8], ReadFailure> {
        let fd: Int32
        do {
            fd = try open(path, .readOnly)
        } catch {
            return .failure(.errno(error.errno))
        }
        defer { Descriptor.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            switch chunk.withUnsafeMutableBytes({ Descriptor.read(fd, into: $0) }) {
            case .bytes(let n):
                bytes.append(contentsOf: chunk[0..<n])
                if bytes.count > limit { return .failure(.tooLarge) }
            case .endOfFile:
                return .success(bytes)
            case .wouldBlock:
                return .failure(.errno(EAGAIN))
            case .failed(let code):
                return .failure(.errno(code))
            }
        }
    }
}
