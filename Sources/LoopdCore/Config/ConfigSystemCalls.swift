import Glibc

/// The only place the config code calls libc: reading the file and turning
/// user and group names into ids. Names are resolved once, at load, so a
/// name that does not exist stops the daemon at start instead of silently
/// allowing nobody; the policy check per request then compares integers only.
enum ConfigSystemCalls {
    /// Why a lookup produced no id.
    enum Failure: Error {
        /// The database answered: there is no such name.
        case notFound
        /// The lookup itself failed (NSS error, out of memory); errno attached.
        case failed(Int32)
    }

    /// The uid of user `name` (getpwnam_r).
    static func uid(ofUser name: String) -> Result<UInt32, Failure> {
        lookUp(name, sizeHint: _SC_GETPW_R_SIZE_MAX) { name, buffer, size in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            let rc = getpwnam_r(name, &entry, buffer, size, &found)
            return (rc, found == nil ? nil : UInt32(entry.pw_uid))
        }
    }

    /// The gid of group `name` (getgrnam_r).
    static func gid(ofGroup name: String) -> Result<UInt32, Failure> {
        lookUp(name, sizeHint: _SC_GETGR_R_SIZE_MAX) { name, buffer, size in
            var entry = group()
            var found: UnsafeMutablePointer<group>?
            let rc = getgrnam_r(name, &entry, buffer, size, &found)
            return (rc, found == nil ? nil : UInt32(entry.gr_gid))
        }
    }

    /// Runs a `get*nam_r` call, growing its string buffer on ERANGE (large
    /// groups have long member lists) up to 1 MiB.
    private static func lookUp(
        _ name: String, sizeHint: Int,
        _ call: (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>, Int) -> (Int32, UInt32?)
    ) -> Result<UInt32, Failure> {
        var size = max(Int(sysconf(Int32(sizeHint))), 1024)
        while true {
            let (rc, id) = withUnsafeTemporaryAllocation(of: CChar.self, capacity: size) { buffer in
                // Safe: capacity is at least 1024, so the buffer has an address.
                name.withCString { call($0, buffer.baseAddress!, size) }
            }
            switch rc {
            case 0: return id.map { .success($0) } ?? .failure(.notFound)
            // glibc reports "no such entry" as 0 with a nil result, but POSIX
            // also permits these codes for it.
            case ENOENT, ESRCH, EBADF, EPERM: return .failure(.notFound)
            case EINTR: continue
            case ERANGE where size < 1 << 20: size *= 2
            default: return .failure(.failed(rc))
            }
        }
    }

    /// The text of an errno, for messages.
    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Reads a whole file, refusing anything over `limit` bytes (a config is a
    /// few kilobytes; a huge file is a mistake such as pointing at a log).
    static func readFile(_ path: String, limit: Int) -> Result<[UInt8], ReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { return .failure(.errno(errno)) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(.errno(errno))
            }
            if n == 0 { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { return .failure(.tooLarge) }
        }
    }

    /// Why `readFile` failed.
    enum ReadFailure: Error {
        case errno(Int32)
        case tooLarge
    }
}

extension ConfigSystemCalls {
    /// Whether `path` names something this process may read (access(2), R_OK).
    static func isReadableFile(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }
}
