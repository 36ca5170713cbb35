import Foundation
import Testing
@testable import LoopctlCommands

#if canImport(Glibc)
import Glibc
#endif

/// Which socket loopctl talks to: the one it is told (`--socket`, then
/// `LOOPD_SOCKET`), else the installed `/run/loopd.sock`; a `loopd.sock`
/// that merely exists in the current directory is never used unasked.
@Suite("loopctl: the socket is the one named, never ./loopd.sock by surprise")
struct LoopctlSocketChoiceTests {
    /// A server that answers ping and records what it was sent.
    static func pingServer(path: String? = nil, listeningAs owner: UInt32? = nil) throws -> (FakeServer, SeenLines) {
        let seen = SeenLines()
        let server = try FakeServer(path: path, listeningAs: owner) { request, _ in
            seen.append(request)
            return .lines([FakeServer.reply(to: request, #""ok":true,"pid":7,"version":"0.1.0""#)])
        }
        return (server, seen)
    }

    @Test("the loopctl process in a directory with a loopd.sock: unused unless named; LOOPD_SOCKET is used; --socket beats it")
    func theWorkingDirectorysSocketIsUsedOnlyWhenNamed() throws {
        let binary = try #require(LoopctlBinary.url(), "loopctl binary not found next to the test bundle")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loopctl-cwd-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (here, seenHere) = try Self.pingServer(path: directory + "/loopd.sock")
        defer { here.stop() }
        let (named, seenNamed) = try Self.pingServer()
        defer { named.stop() }
        let (flagged, seenFlagged) = try Self.pingServer()
        defer { flagged.stop() }

        // Neither flag nor variable: /run/loopd.sock (whatever is there on
        // this machine), not the socket next to it.
        let plain = try LoopctlBinary.outcome(binary, ["ping"], in: directory)
        #expect(plain.status == 0 || plain.standardError.contains("/run/loopd.sock"), "\(plain)")
        #expect(seenHere.all.isEmpty)

        let fromEnvironment = try LoopctlBinary.outcome(binary, ["ping"], environment: ["LOOPD_SOCKET": named.path], in: directory)
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        #expect(seenNamed.all.count == 1 && seenHere.all.isEmpty)

        let fromFlag = try LoopctlBinary.outcome(
            binary, ["ping", "--socket", flagged.path], environment: ["LOOPD_SOCKET": named.path], in: directory)
        #expect(fromFlag.status == 0, "\(fromFlag)")
        #expect(seenFlagged.all.count == 1 && seenNamed.all.count == 1 && seenHere.all.isEmpty)

        // Named, the development socket is used, by the flag or the variable.
        #expect(try LoopctlBinary.outcome(binary, ["ping", "--socket", "./loopd.sock"], in: directory).status == 0)
        #expect(try LoopctlBinary.outcome(binary, ["ping"], environment: ["LOOPD_SOCKET": "./loopd.sock"], in: directory).status == 0)
        #expect(seenHere.all.count == 2)
    }
}

/// `--server-uid` and `LOOPD_SERVER_UID`: before sending anything, loopctl
/// checks which uid made the daemon's socket listen (`SO_PEERCRED`) and
/// exits 9 when it is not the one expected.
@Suite("loopctl: the server's uid")
struct LoopctlServerUIDTests {
    static let nobody: UInt32 = 65534

    /// Runs `arguments` against `server` in-process; the status and stderr.
    static func ping(_ server: FakeServer, _ arguments: [String], environment: [String: String] = [:])
        -> (status: LoopctlCommands.ExitStatus, standardError: String) {
        let captured = Captured()
        let status = Loopctl.execute(["ping", "--socket", server.path] + arguments, in: captured.context(environment: environment))
        return (status, captured.err)
    }

    @Test("the option and the variable: a uid or any, the option first; none means the default (uid 0 at /run/loopd.sock)")
    func parsingAndPrecedence() throws {
        let plain: PingCommand = try parse(["ping"])
        #expect(try plain.connection.serverUID(in: Captured().context()) == nil)
        #expect(try plain.connection.serverUID(in: Captured().context(environment: ["LOOPD_SERVER_UID": ""])) == nil)
        #expect(try plain.connection.serverUID(in: Captured().context(environment: ["LOOPD_SERVER_UID": "1000"])) == .uid(1000))
        #expect(try plain.connection.serverUID(in: Captured().context(environment: ["LOOPD_SERVER_UID": "any"])) == .any)
        let flagged: PingCommand = try parse(["ping", "--server-uid", "any"])
        #expect(try flagged.connection.serverUID(in: Captured().context(environment: ["LOOPD_SERVER_UID": "0"])) == .any)
        #expect(try (parse(["ping", "--server-uid", "0"]) as PingCommand).connection.serverUID(in: Captured().context()) == .uid(0))
    }

    @Test("2: a --server-uid or LOOPD_SERVER_UID that is neither a uid nor any, before connecting")
    func badValuesAreUsageErrors() throws {
        let (server, seen) = try LoopctlSocketChoiceTests.pingServer()
        defer { server.stop() }
        for value in ["root", "-1", "4294967296", "0x10"] {
            #expect(Self.ping(server, ["--server-uid", value]).status == .usage, "\(value)")
        }
        let fromEnvironment = Self.ping(server, [], environment: ["LOOPD_SERVER_UID": "root"])
        #expect(fromEnvironment.status == .usage && fromEnvironment.status.code == 2)
        #expect(fromEnvironment.standardError == "loopctl: LOOPD_SERVER_UID must be a uid or 'any', not 'root'\n")
        #expect(seen.all.isEmpty && server.connectionsEnded == 0)
    }

    @Test("9: a socket made to listen by a uid other than --server-uid names the path and both uids; the right uid passes")
    func theWrongUIDExitsNine() throws {
        let (server, seen) = try LoopctlSocketChoiceTests.pingServer()
        defer { server.stop() }
        let mine = getuid()
        let other = mine == 0 ? Self.nobody : mine + 1
        let refused = Self.ping(server, ["--server-uid", "\(other)"])
        #expect(refused.status == .serverUIDMismatch && refused.status.code == 9)
        #expect(refused.standardError == """
            loopctl: refusing the daemon at \(server.path): uid \(mine) made its socket listen, not the expected uid \(other)
            loopctl: to trust that uid there, say so with --server-uid or LOOPD_SERVER_UID.

            """)
        #expect(Self.ping(server, [], environment: ["LOOPD_SERVER_UID": "\(other)"]).status == .serverUIDMismatch)
        // The refused connections have been read to their end: nothing came on them.
        #expect(waitUntil { server.connectionsEnded == 2 })
        #expect(seen.all.isEmpty)

        #expect(Self.ping(server, ["--server-uid", "\(mine)"]).status == .ok)
        #expect(Self.ping(server, ["--server-uid", "any"], environment: ["LOOPD_SERVER_UID": "\(other)"]).status == .ok)
        // Away from /run/loopd.sock, the default checks nothing.
        #expect(Self.ping(server, []).status == .ok)
        #expect(seen.all.count == 3)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to make a socket listen as another uid"))
    func aSocketMadeByAnotherUIDIsRefused() throws {
        let (server, seen) = try LoopctlSocketChoiceTests.pingServer(listeningAs: Self.nobody)
        defer { server.stop() }
        let refused = Self.ping(server, ["--server-uid", "0"])
        #expect(refused.status == .serverUIDMismatch)
        #expect(refused.standardError.hasPrefix(
            "loopctl: refusing the daemon at \(server.path): uid 65534 made its socket listen, not the expected uid 0\n"))
        #expect(Self.ping(server, [], environment: ["LOOPD_SERVER_UID": "0"]).status == .serverUIDMismatch)
        #expect(waitUntil { server.connectionsEnded == 2 })
        #expect(seen.all.isEmpty)

        #expect(Self.ping(server, ["--server-uid", "65534"]).status == .ok)
        #expect(Self.ping(server, [], environment: ["LOOPD_SERVER_UID": "any"]).status == .ok)
        #expect(seen.all.count == 2)
    }

    @Test("the loopctl process exits 9 on a mismatch")
    func processExitCode() throws {
        let binary = try #require(LoopctlBinary.url(), "loopctl binary not found next to the test bundle")
        let (server, seen) = try LoopctlSocketChoiceTests.pingServer()
        defer { server.stop() }
        let other = getuid() == 0 ? Self.nobody : getuid() + 1
        #expect(try LoopctlBinary.run(binary, ["ping", "--socket", server.path, "--server-uid", "\(other)"]) == 9)
        #expect(waitUntil { server.connectionsEnded == 1 })
        #expect(seen.all.isEmpty)
    }
}
