import LoopPlatform
import Glibc
import LoopRuntime
import LoopdProtocol

/// The listening socket as a source on the main loop. Accepts in bursts;
/// when the process runs out of descriptors it pauses accepting for a
/// moment instead of spinning on a socket it cannot serve. Main thread only.
final class Listener: @unchecked Sendable {
    let fd: Int32
    /// Whether the daemon bound the socket itself (and so removes the node on exit).
    let path: String?
    private var source: LoopFileDescriptorSource?
    private var resumeTimer: LoopTimer?
    private unowned let server: Server

    init(fd: Int32, path: String?, server: Server) {
        self.fd = fd
        self.path = path
        self.server = server
    }

    func attach(to loop: Loop) {
        let s = LoopFileDescriptorSource(fileDescriptor: fd, interest: .readable) { [unowned self] _ in acceptBurst(loop) }
        source = s
        loop.add(s, forMode: .default)
    }

    private func acceptBurst(_ loop: Loop) {
        for _ in 0..<64 {
            do {
                guard let client = try UnixSocket.accept(fd) else { return }
                server.accepted(client)
            } catch where error.errno == EMFILE || error.errno == ENFILE || error.errno == ENOBUFS || error.errno == ENOMEM {
                pause(loop, for: .milliseconds(100))
                server.log(.warning, "accept paused: \(error)")
                return
            } catch {
                server.log(.error, "accept failed: \(error)")
                return
            }
        }
    }

    private func pause(_ loop: Loop, for delay: Duration) {
        source?.interest = []
        let t = LoopTimer(after: delay) { [unowned self] _ in
            source?.interest = .readable
            resumeTimer = nil
        }
        resumeTimer = t
        loop.add(t, forMode: .default)
    }

    /// Stops accepting and closes the socket; removes the node if we made it.
    func close() {
        resumeTimer?.invalidate()
        source?.invalidate()
        source = nil
        Descriptor.close(fd)
        if let path { try? FileSystem.removeIfPresent(path) }
    }
}
