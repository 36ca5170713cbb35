import Foundation
import Testing

/// R27 needs a process whose main thread runs `Loop.main`; the test runner's
/// main thread belongs to the runner, so these tests run the example program
/// (Examples/loop-example), built beside the test bundle.
@Suite struct MainQueueTests {
    private func runExample() throws -> [String] {
        let dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let process = Process()
        process.executableURL = dir.appendingPathComponent("loop-example")
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func R27_mainLoopServesDispatchMainQueueAndMainActor() throws {
        let lines = try runExample()
        #expect(lines.contains("dispatch: main queue block on main = true"))
        #expect(lines.contains("actor: @MainActor function on main = true"))
        #expect(lines.contains("port: message 7 with 15 bytes on main = true"))
        #expect(lines.contains("run returned stopped"))
    }

    @Test func R27_privateModeHoldsMainQueueUntilACommonModeRuns() throws {
        let lines = try runExample()
        #expect(lines.contains("dispatch: block held during the private mode ran afterwards = true"))
    }
}
