import Glibc
internal import LoopPlatform

/// The client's one door to the kernel: connects to the daemon's socket
/// through LoopPlatform, which owns every kernel call of the package, and
/// checks who made the listening socket before NIO adopts the descriptor.
/// Checking before the hand-over means no request can be written to a
/// socket the check refuses, whatever the pipeline does once it is active.
enum DaemonSocket {
    /// A connected, non-blocking, close-on-exec descriptor for `path`
    /// whose listener was made by `expectedUID` (any uid when nil). On
    /// failure nothing is left open.
    ///
    /// Runs on the calling thread, which matters: the daemon reads the
    /// client's credentials from the thread that connects (the event loop's).
    /// A full listen backlog throws `cannotConnect` with `errno` `EAGAIN`,
    /// for the caller to retry.
    static func connect(path: String, expectedUID: UInt32?) throws(LoopdError) -> Int32 {
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path: path)
        } catch {
            let reason = error.errno == ENAMETOOLONG ? "the path is too long for a Unix socket" : errnoText(error.errno)
            throw LoopdError(.cannotConnect, "cannot connect to loopd at \(path): \(reason)", errno: error.errno)
        }
        guard let expectedUID else { return fd }
        guard let peer = UnixSocket.peer(fd) else {
            // Fail closed: a listener whose owner cannot be read is not trusted.
            Descriptor.close(fd)
            throw LoopdError(.cannotConnect, "cannot read the uid behind loopd's socket at \(path) (SO_PEERCRED)")
        }
        guard peer.uid == expectedUID else {
            Descriptor.close(fd)
            throw LoopdError(mismatch: LoopdError.ServerUIDMismatch(socketPath: path, expected: expectedUID, actual: peer.uid))
        }
        return fd
    }
}
