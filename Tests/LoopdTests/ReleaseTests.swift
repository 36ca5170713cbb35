import Foundation
import LoopdProtocol
import Testing

/// What a release promises its users: one version everywhere, and durable
/// jobs journaled by the previous release run after an upgrade.
@Suite(.serialized) struct ReleaseTests {
    /// A built executable next to the test bundle (loopd, loopctl), run to its end.
    private func run(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent(name)
        let p = Process()
        p.executableURL = exe
        p.arguments = arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func loopdLoopctlAndPingReportTheSameVersion() throws {
        let daemon = try run("loopd", ["--version"])
        let client = try run("loopctl", ["--version"])
        #expect(daemon.status == 0 && client.status == 0)
        #expect(daemon.output == LoopdVersion.current + "\n")
        #expect(client.output == daemon.output)

        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let d = DurableReplayTests.DaemonProcess(directory: dir)
        try d.start()
        defer { d.terminate() }
        let c = try TestClient(path: d.socketPath)
        let ping = try #require(c.call(#"{"id":1,"op":"ping"}"#))
        #expect(ping["version"] == .string(LoopdVersion.current))
        let human = try run("loopctl", ["ping", "--socket", d.socketPath])
        #expect(human.output.hasPrefix("loopd \(LoopdVersion.current) is up"), "\(human.output)")
    }

    /// Tests/Fixtures/journal-0.1.0: written by loopd 0.1.0 (see its README):
    /// three durable echo jobs acknowledged on a held worker, unfinished when
    /// that loopd stopped.
    @Test func durableJobsJournaledByTheLastReleaseRunAfterTheUpgrade() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/journal-0.1.0/journal.log").path
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/state", withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: fixture, toPath: dir + "/state/journal.log")

        let d = DurableReplayTests.DaemonProcess(directory: dir)
        try d.start()
        defer { d.terminate() }
        let c = try TestClient(path: d.socketPath)
        for (n, job) in ["mwuj3f5v-2", "mwuj3f5v-3", "mwuj3f5v-4"].enumerated() {
            #expect(c.waitForState(job, "completed") == "completed", "job \(job)")
            let status = try #require(c.call(#"{"id":\#(n + 1),"op":"status","job":"\#(job)"}"#))
            #expect(status["worker"] == "w1")
            #expect(status["result"]?["output"] == .string("replayed \(n)"))
        }
    }
}
