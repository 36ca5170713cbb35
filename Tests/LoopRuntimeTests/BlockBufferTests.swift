import Testing
@testable import LoopRuntime

/// The block queue behind `perform` (R23, R24): order, mode lists kept with
/// their blocks, held blocks put back ahead of newer ones.
@Suite struct BlockBufferTests {
    /// Queues `tags` (a tag's modes: nil, or the listed ones) and returns the
    /// buffer; each block appends its tag to `log` when run.
    private func filled(_ tags: [(String, [Loop.Mode]?)], log: Recorder<String>) -> BlockBuffer {
        var buffer = BlockBuffer()
        for (tag, modes) in tags { buffer.append({ log.append(tag) }, modes: modes) }
        return buffer
    }

    /// Takes everything, running what `mode` admits and returning the rest, in order.
    private func drain(_ buffer: inout BlockBuffer, mode: Loop.Mode, isCommon: Bool) -> BlockBuffer {
        var held = BlockBuffer()
        while !buffer.isEmpty {
            let (work, modes) = buffer.take()
            if Loop.admits(modes, mode: mode, modeIsCommon: isCommon) { work() } else { held.append(work, modes: modes) }
        }
        return held
    }

    @Test func R23_blocksComeOutInTheOrderTheyWentInWithTheirModes() {
        let log = Recorder<String>()
        var buffer = filled((0..<300).map { i in ("\(i)", i % 7 == 0 ? ["x"] : nil) }, log: log)
        // (#expect cannot take a non-copyable buffer: its figures are read first.)
        let (count, forDefault, forX) = (buffer.count, buffer.admittedCount(mode: .default, modeIsCommon: true),
                                         buffer.admittedCount(mode: "x", modeIsCommon: false))
        #expect(count == 300 && forDefault == 300 - 43 && forX == 43)
        var held = drain(&buffer, mode: .default, isCommon: true)
        #expect(log.all == (0..<300).filter { $0 % 7 != 0 }.map { "\($0)" })
        let (heldCount, heldForDefault, heldForX) = (held.count, held.admitsAny(mode: .default, modeIsCommon: true),
                                                     held.admitsAny(mode: "x", modeIsCommon: false))
        #expect(heldCount == 43 && !heldForDefault && heldForX)
        let rest = drain(&held, mode: "x", isCommon: false)
        let restIsEmpty = rest.isEmpty
        #expect(restIsEmpty)
        #expect(log.all.suffix(43) == (0..<300).filter { $0 % 7 == 0 }.map { "\($0)" })
    }

    @Test func R24_heldBlocksGoBackAheadOfNewerOnes() {
        let log = Recorder<String>()
        var queue = filled([("a", ["x"]), ("b", nil), ("c", [.common])], log: log)
        // A pass of a custom mode outside the common set holds b and c.
        var held = drain(&queue, mode: "x", isCommon: false)
        #expect(log.all == ["a"])
        var newer = filled([("d", nil), ("e", ["x"])], log: log)
        newer.prepend(&held)
        let (heldIsEmpty, forDefault) = (held.isEmpty, newer.admittedCount(mode: .default, modeIsCommon: true))
        #expect(heldIsEmpty && forDefault == 3)
        let rest = drain(&newer, mode: .default, isCommon: true)
        #expect(log.all == ["a", "b", "c", "d"])
        let (restCount, restForX) = (rest.count, rest.admitsAny(mode: "x", modeIsCommon: false))
        #expect(restCount == 1 && restForX)
    }

    @Test func aPartlyTakenBufferKeepsModesRightWhenItGrows() {
        let log = Recorder<String>()
        var buffer = filled((0..<64).map { i in ("\(i)", i == 63 ? ["x"] : nil) }, log: log)
        for _ in 0..<10 { buffer.take().work() }
        // Full to its capacity: the next append moves the rest to new storage.
        buffer.append({ log.append("64") }, modes: ["y"])
        let count = buffer.count
        #expect(count == 55)
        var order: [String] = [], modes: [[Loop.Mode]?] = []
        while !buffer.isEmpty {
            let (work, m) = buffer.take()
            work()
            order.append(log.all.last!)
            modes.append(m)
        }
        #expect(order == (10...64).map { "\($0)" })
        #expect(modes.compactMap { $0 } == [["x"], ["y"]])
        #expect(modes.suffix(2).allSatisfy { $0 != nil })
    }
}
