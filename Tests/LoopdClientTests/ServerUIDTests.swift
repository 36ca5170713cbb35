import Glibc
import LoopdClient
import Testing

/// The server-uid check: before a request is written, the client reads
/// which uid made the daemon's socket listen (`SO_PEERCRED`) and refuses
/// any other than `Configuration.serverUID` requires, so a socket someone
/// else made never receives a job's arguments.
@Suite("LoopdClient: the server's uid is checked before anything is sent")
struct ServerUIDTests {
    static let nobody: UInt32 = 65534

    /// A daemon that answers pings and records every request it reads.
    static func pingDaemon(listeningAs owner: UInt32? = nil) throws -> (ScriptedDaemon, Shared<[String]>) {
        let seen = Shared<[String]>([])
        let daemon = try ScriptedDaemon(listeningAs: owner) { request in
            seen.update { $0.append(request.serialized()) }
            return [#"{"id":\#(request["id"]?.serialized() ?? "null"),"ok":true,"pid":1,"version":"0.0.0"}"#]
        }
        return (daemon, seen)
    }

    @Test("the default checks uid 0 at the installed path only; a uid is required everywhere; any checks nothing")
    func whichUIDIsRequiredWhere() {
        #expect(LoopdClient.Configuration().serverUID == .automatic)
        #expect(LoopdClient.ServerUID.automatic.expectedUID(at: "/run/loopd.sock") == 0)
        #expect(LoopdClient.ServerUID.automatic.expectedUID(at: LoopdClient.installedSocketPath) == 0)
        #expect(LoopdClient.ServerUID.automatic.expectedUID(at: "./loopd.sock") == nil)
        #expect(LoopdClient.ServerUID.automatic.expectedUID(at: "/tmp/loopd.sock") == nil)
        #expect(LoopdClient.ServerUID.uid(1000).expectedUID(at: "/tmp/loopd.sock") == 1000)
        #expect(LoopdClient.ServerUID.uid(1000).expectedUID(at: "/run/loopd.sock") == 1000)
        #expect(LoopdClient.ServerUID.any.expectedUID(at: "/run/loopd.sock") == nil)
    }

    @Test("a real daemon is accepted as the uid that runs it and refused as any other, with a typed error")
    func aRealDaemonUnderTheRightAndTheWrongUID() async throws {
        let d = TestDaemon()
        defer { d.stop() }
        let mine = getuid()
        let right = try await LoopdClient.connect(socketPath: d.socketPath, configuration: .init(serverUID: .uid(mine)))
        #expect(try await right.ping().pid > 0)
        await right.close()

        let other = mine == 0 ? Self.nobody : mine + 1
        let error = await loopdError {
            _ = try await LoopdClient.connect(socketPath: d.socketPath, configuration: .init(serverUID: .uid(other)))
        }
        #expect(error?.code == .serverUIDMismatch && error?.code.isFromDaemon == false)
        #expect(error?.code.description == "server_uid_mismatch")
        #expect(error?.serverUIDMismatch == .init(socketPath: d.socketPath, expected: other, actual: mine))
        #expect(error?.message == "refusing the socket at \(d.socketPath): uid \(mine) made it listen, not the expected uid \(other)")

        // The blocking client takes the same configuration.
        let blocking = blockingError {
            _ = try LoopdClient.Blocking(socketPath: d.socketPath, configuration: .init(serverUID: .uid(other)))
        }
        #expect(blocking?.code == .serverUIDMismatch && blocking?.serverUIDMismatch?.actual == mine)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to make a socket listen as another uid"))
    func aSocketMadeByAnotherUIDIsRefusedBeforeAnyRequestIsWritten() async throws {
        let (daemon, seen) = try Self.pingDaemon(listeningAs: Self.nobody)
        defer { daemon.stop() }

        let refused = LoopdClient(socketPath: daemon.socketPath, configuration: .init(serverUID: .uid(0)))
        let error = await loopdError { try await refused.connect() }
        #expect(error?.code == .serverUIDMismatch)
        #expect(error?.serverUIDMismatch == .init(socketPath: daemon.socketPath, expected: 0, actual: Self.nobody))
        #expect(error?.message.contains(daemon.socketPath) == true)
        #expect(!refused.isConnected)
        // The refused connection has been read to its end: nothing came on it.
        #expect(await eventually { daemon.connectionsEnded == 1 })
        #expect(seen.value.isEmpty)

        let expected = try await LoopdClient.connect(
            socketPath: daemon.socketPath, configuration: .init(serverUID: .uid(Self.nobody)))
        #expect(try await expected.ping().pid == 1)
        await expected.close()
        let unchecked = try await LoopdClient.connect(socketPath: daemon.socketPath, configuration: .init(serverUID: .any))
        #expect(try await unchecked.ping().pid == 1)
        await unchecked.close()
        // The default checks nothing away from the installed path.
        let automatic = try await LoopdClient.connect(socketPath: daemon.socketPath)
        #expect(try await automatic.ping().pid == 1)
        await automatic.close()
        #expect(seen.value.count == 3)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to make a socket listen as another uid"))
    func everyReconnectIsCheckedToo() async throws {
        let (daemon, _) = try Self.pingDaemon(listeningAs: Self.nobody)
        defer { daemon.stop() }
        let client = try await LoopdClient.connect(
            socketPath: daemon.socketPath, configuration: .init(serverUID: .uid(Self.nobody)))
        try await client.reconnect()
        #expect(client.isConnected)
        await client.close()

        let strict = LoopdClient(socketPath: daemon.socketPath,
                                 configuration: .init(reconnectsAutomatically: true, serverUID: .uid(0)))
        #expect(await loopdError { _ = try await strict.ping() }?.code == .serverUIDMismatch)
        #expect(await loopdError { try await strict.reconnect() }?.code == .serverUIDMismatch)
    }
}
