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

    /// A user's account: what a process that runs as this user is given.
    public struct Account: Sendable, Equatable {
        public var name: String
        public var uid: UInt32
        /// The primary group.
        public var gid: UInt32

        public init(name: String, uid: UInt32, gid: UInt32) {
            self.name = name
            self.uid = uid
            self.gid = gid
        }
    }

    /// The account of user `name` (getpwnam_r).
    public static func account(ofUser name: String) -> Result<Account, Failure> {
        lookUp(name, sizeHint: _SC_GETPW_R_SIZE_MAX) { name, buffer, size in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            let rc = getpwnam_r(name, &entry, buffer, size, &found)
            return (rc, found == nil ? nil : Account(name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid))
        }
    }

    /// The account of uid `uid` (getpwuid_r); `notFound` for a uid without one.
    public static func account(ofUID uid: UInt32) -> Result<Account, Failure> {
        lookUp(String(uid), sizeHint: _SC_GETPW_R_SIZE_MAX) { _, buffer, size in
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            let rc = getpwuid_r(uid, &entry, buffer, size, &found)
            return (rc, found == nil ? nil : Account(name: String(cString: entry.pw_name), uid: entry.pw_uid, gid: entry.pw_gid))
        }
    }

    /// The groups user `name` belongs to, `gid` first (getgrouplist(3)):
    /// what login gives its processes as supplementary groups.
    public static func groups(ofUser name: String, primary gid: UInt32) -> [UInt32] {
        var count: Int32 = 32
        while true {
            var list = [gid_t](repeating: 0, count: Int(count))
            let wanted = count
            if getgrouplist(name, gid, &list, &count) >= 0 { return list.prefix(Int(count)).map { UInt32($0) } }
            // -1 with `count` raised to what is needed; give up past a sane size.
            if count <= wanted || count > 65_536 { return [gid] }
        }
    }

    /// Runs a `get*nam_r` call, growing its string buffer on ERANGE (large
    /// groups have long member lists) up to 1 MiB.
    private static func lookUp<Value>(
        _ name: String, sizeHint: Int,
        _ call: (UnsafePointer<CChar>, UnsafeMutablePointer<CChar>, Int) -> (Int32, Value?)
    ) -> Result<Value, Failure> {
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
