#if canImport(Glibc)
import Glibc
#endif

/// User names of this host's uids, for the uid that submitted a job
/// (loopd and the dashboard run on one host).
enum UserNames {
    static func name(_ uid: Int64) -> String? {
        guard let id = uid_t(exactly: uid) else { return nil }
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let rc = getpwuid_r(id, &entry, &buffer, buffer.count, &found)
        guard rc == 0, found != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }
}
