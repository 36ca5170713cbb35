import LoopPlatform
import CSystemd
import Glibc

/// Socket activation: the listening socket systemd passes (LISTEN_FDS,
/// named by FileDescriptorName=).
enum SocketActivation {
    /// The passed socket named `name` (or the only one passed, whatever its
    /// name), made non-blocking; nil when not socket-activated.
    static func listeningSocket(named name: String) -> Int32? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let n = sd_listen_fds_with_names(1, &names)
        guard n > 0 else { return nil }
        defer {
            if let names {
                for i in 0..<Int(n) { free(names[i]) }
                free(names)
            }
        }
        var chosen: Int32?
        for i in 0..<Int(n) {
            let fd = SD_LISTEN_FDS_START + Int32(i)
            let fdName = names?[i].map { String(cString: $0) } ?? ""
            if fdName == name || (n == 1 && chosen == nil) { chosen = fd }
        }
        if let fd = chosen { Descriptor.setNonBlockingAndCloseOnExec(fd) }
        return chosen
    }
}
