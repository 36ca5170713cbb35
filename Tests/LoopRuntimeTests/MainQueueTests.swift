import Testing

/// R3 and R27 need a process whose main thread runs `Loop.main`; the test
/// runner's main thread belongs to the runner, so these tests run programs
/// built beside the test bundle: the example (Examples/loop-example) and
/// MainQueueProbe (Tests/Programs), one scenario per process.
@Suite struct MainQueueTests {
    private func probe(_ scenario: String) throws -> [String] { try runProgram("MainQueueProbe", [scenario]) }

    @Test func R27_mainLoopServesDispatchMainQueueAndMainActor() throws {
        let lines = try runProgram("loop-example")
        #expect(lines.contains("dispatch: main queue block on main = true"))
        #expect(lines.contains("actor: @MainActor function on main = true"))
        #expect(lines.contains("port: message 7 with 15 bytes on main = true"))
        #expect(lines.contains("run returned stopped"))
    }

    @Test func R27_privateModeHoldsMainQueueUntilACommonModeRuns() throws {
        let lines = try runProgram("loop-example")
        #expect(lines.contains("dispatch: block held during the private mode ran afterwards = true"))
    }

    @Test func R3_mainLoopWithOnlyTheMainQueueWaitsForItInTheDefaultMode() throws {
        #expect(try probe("default") == ["block ran on main = true", "run returned stopped"])
    }

    @Test func R3_aMainQueueBlockThatArrivesLaterWakesTheRun() throws {
        #expect(try probe("later") == ["late block ran on main = true", "run returned stopped"])
    }

    @Test func R3_aCommonModeCountsTheMainQueue() throws {
        #expect(try probe("common") == ["block ran in mode tracking", "run returned stopped"])
    }

    @Test func R3_aModeOutsideTheCommonSetDoesNotCountTheMainQueue() throws {
        #expect(try probe("private") == [
            "private run returned finished", "ran during the private run = false",
            "default run returned stopped", "ran after the default run = true",
        ])
    }

    @Test func R27_aRunNestedInAMainQueueBlockNeitherCountsNorDrainsTheQueue() throws {
        #expect(try probe("nested") == [
            "nested run returned finished", "order: outer start, outer end, inner block", "run returned stopped",
        ])
    }

    @Test func R27_mainActorWorkKeepsTheMainLoopRunning() throws {
        #expect(try probe("mainactor") == ["main actor work on main = true", "run returned stopped"])
    }

    @Test func R20_runWithoutATimeoutServesTheMainQueueUntilStopped() throws {
        #expect(try probe("forever") == ["block ran", "run() returned"])
    }
}
