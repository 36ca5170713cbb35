import CThreadCredentials
import Foundation
import Glibc
import LoopdProtocol
import Synchronization

/// A stand-in for loopd that answers each request line with the lines
/// `answer` makes of it, exactly as written (a `\n` is added to each): for
/// replies a real daemon never sends. One connection at a time, on a
/// thread of its own.
final class ScriptedDaemon: Sendable {
    let socketPath: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    /// Connections accepted and read to their end.
    private let ended = Shared(0)

    /// - Parameter owner: when set, the socket is made to listen by a
    ///   thread running as this uid (and gid), so clients see that uid
    ///   behind it (`SO_PEERCRED`). Needs root.
    init(listeningAs owner: UInt32? = nil, answer: @escaping @Sendable (_ request: JSON) -> [String]) throws {
        socketPath = TestDaemon.makeTempDirectory() + "/scripted.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EINVAL) }
        let listening = owner.map { cthreadcred_listen_as(listener, 4, $0, $0) } ?? listen(listener, 4)
        guard listening == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EINVAL) }
        let (done, ended) = (self.done, self.ended)
        Thread.detachNewThread {
            while case let fd = accept(listener, nil, nil), fd >= 0 {
                Self.converse(fd, answer)
                close(fd)
                ended.update { $0 += 1 }
            }
            done.signal()
        }
    }

    /// How many connections the daemon has read to their end (the client
    /// closed them, or the answers stopped): after a client closed its
    /// connection, waiting for this count makes sure every byte it wrote
    /// has been through `answer`.
    var connectionsEnded: Int { ended.value }

    /// Stops accepting and removes the socket and its directory.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))  // wakes the blocked accept
        done.wait()
        close(listener)
        try? FileManager.default.removeItem(atPath: (socketPath as NSString).deletingLastPathComponent)
    }

    private static func converse(_ fd: Int32, _ answer: @Sendable (JSON) -> [String]) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            while let newline = pending.firstIndex(of: 0x0A) {
                let request = (try? JSONParser.parse(pending[..<newline])) ?? .null
                pending.removeSubrange(...newline)
                let out = Array(answer(request).map { $0 + "\n" }.joined().utf8)
                guard out.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == out.count else { return }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            pending.append(contentsOf: buffer[..<n])
        }
    }
}

/// A value that a stand-in daemon's thread and the test share.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
    var value: Value { mutex.withLock { $0 } }
}
