import Glibc

/// Calls on paths: opening and reading files, and asking whether one can be
/// read. Every descriptor is `O_CLOEXEC`, so `exec` children never inherit
/// one, and blocking: regular files ignore `O_NONBLOCK`. Each throwing call
/// retries EINTR and throws the errno with the path. Any thread; nothing
/// here keeps state.
enum FileSystem {
    /// How `open` opens a file.
    enum OpenMode {
        case readOnly
        /// Read-write, never `O_APPEND` (Linux ignores pwrite's offset under
        /// it); `create` makes a missing file with mode 0600, `truncate` empties it.
        case readWrite(create: Bool, truncate: Bool)
    }

    /// open(2) of `path`; the caller closes the descriptor (`Descriptor.close`).
    static func open(_ path: String, _ mode: OpenMode) throws(SystemError) -> Int32 {
        var flags = O_CLOEXEC
        switch mode {
        case .readOnly:
            flags |= O_RDONLY
        case let .readWrite(create, truncate):
            flags |= O_RDWR
            if create { flags |= O_CREAT }
            if truncate { flags |= O_TRUNC }
        }
        return try retrying("open", detail: path) { Glibc.open(path, flags, 0o600) }
    }

    /// Whether this process may read `path` (access(2), R_OK).
    static func isReadable(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }

    /// Why `readFile` failed.
    enum ReadFailure: Error {
        case errno(Int32)
        case tooLarge
    }

    /// Reads a whole file, refusing anything over `limit` bytes (a config is a
    /// few kilobytes; a huge file is a mistake such as pointing at a log).
    static func readFile(_ path: String, limit: Int) -> Result<[UInt8], ReadFailure> {
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
