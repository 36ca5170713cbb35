import Foundation
import Glibc
import Testing
@testable import LoopRuntime

/// Who may talk to a named port. An abstract socket name is reachable by
/// every local user, so a port admits its own user (and root) by default,
/// checked against the credentials the kernel attaches (SO_PASSCRED).
@Suite struct PortSenderTests {
    /// Sends, as uid/gid 65534 (setpriv), one request then one one-way
    /// message to `port`; prints the reply's status byte, or "timeout".
    private static let nobodyClient = #"""
    import socket, struct, sys
    H = struct.Struct('<4sBBBBQiI')
    to = b'\0loopd.port.' + sys.argv[1].encode()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(b'')  # autobind, so the port can answer
    s.settimeout(10)
    s.sendto(H.pack(b'LDPM', 1, 2, 0, 0, 9, 1, 2) + b'hi', to)
    try:
        d = s.recv(70000)
        print(H.unpack_from(d)[3], flush=True)
    except socket.timeout:
        print('timeout', flush=True)
    s.sendto(H.pack(b'LDPM', 1, 1, 0, 0, 10, 2, 0), to)
    """#

    private static var canSwitchUser: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    /// Runs `nobodyClient` against `port`; returns what it printed.
    private func askAsNobody(_ port: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/python3", "-c",
                       Self.nobodyClient, port]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a port admits only its own user by default: another user's request is refused, its message dropped",
          .enabled(if: canSwitchUser))
    func anotherUsersMessagesAreRefusedByDefault() throws {
        let thread = LoopThread(name: "same-user")
        let name = uniquePortName("same-user")
        let seen = Counter()
        let port = try LoopMessagePort(name: name) { _ in seen.increment(); return [] }
        thread.loop.add(port, forMode: .default)
        defer { port.invalidate(); thread.stop() }
        #expect(try askAsNobody(name) == String(PortWire.Status.senderRefused.rawValue))
        // Our own request goes through, after the dropped one-way message.
        let reply = try LoopRemotePort.lookup(name: name).sendRequest(id: 3, payload: [], sendTimeout: .seconds(5),
                                                                       receiveTimeout: .seconds(10))
        #expect(reply == [])
        #expect(seen.count == 1, "only our own request reached the handler")
    }

    @Test("senders: .anyUser opens the port to every local user", .enabled(if: canSwitchUser))
    func anyUserPortsServeEveryone() throws {
        let thread = LoopThread(name: "any-user")
        let name = uniquePortName("any-user")
        let seen = Counter()
        let port = try LoopMessagePort(name: name, senders: .anyUser) { _ in seen.increment(); return Array("ok".utf8) }
        thread.loop.add(port, forMode: .default)
        defer { port.invalidate(); thread.stop() }
        #expect(try askAsNobody(name) == String(PortWire.Status.ok.rawValue))
        #expect(eventually { seen.count == 2 }, "the request and the one-way message both arrive")
    }
}
