import Glibc

/// User and group names to ids (getpwnam_r, getgrnam_r). The config
/// resolves names once, at load, so a name that does not exist stops the
/// daemon at start instead of silently allowing nobody; the policy check
/// per request then compares integers only. Any thread: the `_r` calls use
/// the caller's buffer.
public enum UserDatabase {
    /// Why a lookup produced no id.
    public enum Failure: Error {
        /// The database answered: there is no such name.
        case notFound
        /// The lookup itself failed (NSS error, out of memory); errno attached.
        case failed(Int32)
    }

    /// The uid of user `name` (getpwnam_r).
    public static func uid(ofUser name: String) -> Result<UInt32, Failure> {
        lookUp(name, sizeHint: _SC_GETPW_R_SIZE_MAX) { name, buffer, size in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            let rc = getpwnam_r(name, &entry, buffer, size, &found)
            return (rc, found == nil ? nil : UInt32(entry.pw_uid))
        }
    }

    /// The gid of group `name` (getgrnam_r).
    public static func gid(ofGroup name: String) -> Result<UInt32, Failure> {
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
}
