import Foundation
import Glibc
import LoopdCore
import LoopdProtocol

/// A loopd running in-process on a thread of its own, on a temporary
/// socket and state directory (or a given one, to restart a daemon where
/// another ran).
final class TestDaemon: @unchecked Sendable {
    let directory: String
    let socketPath: String
    let daemon: Daemon
    private let ownsDirectory: Bool
    private let done = DispatchSemaphore(value: 0)

    init(directory: String? = nil, configure: (inout DaemonConfig) -> Void = { _ in }) {
        ownsDirectory = directory == nil
        let directory = directory ?? Self.makeTempDirectory()
        self.directory = directory
        socketPath = directory + "/loopd.sock"
        var config = DaemonConfig()
        config.server.socketPath = socketPath
        config.server.stateDirectory = directory + "/state"
        config.server.shutdownGraceMs = 200
        config.journal.fsync = false
        config.workers = [.init(name: "w1"), .init(name: "w2")]
        // Exec children run as another user than loopd's: as root, nobody;
        // a loopd that cannot switch users runs them as itself.
        config.exec.user = getuid() == 0 ? "nobody" : ""
        configure(&config)
        let daemon = Daemon(config: config, log: .silent)
        self.daemon = daemon
        let done = self.done
        let thread = Thread {
            do { try daemon.run() } catch { fatalError("daemon failed to start: \(error)") }
            done.signal()
        }
        thread.start()
        daemon.waitUntilReady()
    }

    /// Shuts the daemon down and waits (bounded) for it to be gone.
    func stop() {
        daemon.shutdown()
        _ = done.wait(timeout: .now() + 30)
    }

    deinit {
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func makeTempDirectory() -> String {
        var template = Array("/tmp/loopd-client-test-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: p!)
    }
}

/// Polls `condition` until it holds or `seconds` pass (the bound only stops
/// a hung test); a condition that throws does not hold.
func eventually(_ seconds: Double = 20, _ condition: () async throws -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if (try? await condition()) == true { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return (try? await condition()) == true
}

extension DaemonConfig {
    /// Adds the exec action `name`, running `argv`, for root and loopd's
    /// own uid (no allow lists).
    mutating func addExecAction(_ name: String, argv: [String]) {
        actions[name] = Action(exec: Exec(argv: argv))
    }
}
