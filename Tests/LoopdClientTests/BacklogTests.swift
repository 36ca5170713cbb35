import Glibc
import LoopPlatform
import LoopdClient
import Testing

/// A burst of clients can fill the daemon's listen backlog, and a
/// non-blocking connect then fails with `EAGAIN` where a blocking one would
/// wait: the client retries for a while (`backlogPatience`) instead of
/// failing, so `loopctl` run from many scripts at once still gets through.
@Suite("LoopdClient: a full listen backlog")
struct BacklogTests {
    @Test("a connect made while the backlog is full waits for a place, then succeeds")
    func connectWaitsForAPlaceInTheBacklog() async throws {
        let path = TestDaemon.makeTempDirectory() + "/backlog.sock"
        let listener = try UnixSocket.listen(path: path, mode: 0o600, group: nil, backlog: 0)
        defer { Descriptor.close(listener) }
        // Fill the backlog: connects that nobody accepts, until one is refused.
        var queued: [Int32] = []
        defer { for fd in queued { Descriptor.close(fd) } }
        while queued.count < 64 {
            do {
                queued.append(try UnixSocket.connect(path: path))
            } catch {
                #expect(error.errno == EAGAIN)
                break
            }
        }
        #expect(queued.count < 64, "the backlog never filled")

        let client = LoopdClient(socketPath: path)
        let connecting = Task { try await client.connect() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!client.isConnected)  // still waiting for a place
        // One place frees up: the waiting connect takes it.
        let accepted = try #require(try UnixSocket.accept(listener))
        defer { Descriptor.close(accepted) }
        try await connecting.value
        #expect(client.isConnected)
        await client.close()
    }
}
