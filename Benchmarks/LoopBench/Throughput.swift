import LoopPlatform
import Dispatch
import LoopRuntime
import NIOCore
import NIOPosix

/// (a) Cross-thread submit throughput: one producer (the benchmark's main
/// thread) submits `blocks` empty blocks to one resident consumer thread.
/// The clock starts before the first submit and stops inside the last block,
/// so the figure is "blocks run per second", not "blocks queued per second".
struct ThroughputBenchmark {
    let blocks: Int
    /// Repetitions per subject; the median is reported.
    let repetitions: Int
    /// A subject stops repeating once it has used this much time (Foundation
    /// needs ~5 s per million), keeping at least one repetition.
    let budgetSeconds: Double

    /// One subject's rates, blocks per second, one per repetition.
    typealias Rates = [Double]

    func run() -> (MarkdownTable, [TargetCheck]) {
        print("(a) throughput: \(blocks) blocks × up to \(repetitions) repetitions per subject, interleaved …")
        let threadWorker = LoopThread(name: "bench-lr")
        let loopWorker = LoopThread(name: "bench-lr-loop")
        let spinWorker = LoopThread(name: "bench-lr-spin", spinBeforeSleeping: spinForComparison)
        let queue = DispatchQueue(label: "bench-dispatch")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let foundationThread = FoundationLoopThread(name: "bench-foundation")
        let rawThread = RawLoopThread(name: "bench-raw")
        defer {
            threadWorker.stop(); loopWorker.stop(); spinWorker.stop()
            try? group.syncShutdownGracefully()
            foundationThread.stop(); rawThread.stop()
        }
        // Each subject calls its own API directly: no per-block indirection.
        let nioLoop = group.next(), loop = loopWorker.loop
        let rates = measureInterleaved([
            { count, last in
                for _ in 1..<count { threadWorker.perform(waitUntilDone: false) {} }
                threadWorker.perform(waitUntilDone: false) { last.finish() }
            },
            { count, last in
                for _ in 1..<count { loop.perform {} }
                loop.perform { last.finish() }
            },
            { count, last in
                for _ in 1..<count { spinWorker.perform(waitUntilDone: false) {} }
                spinWorker.perform(waitUntilDone: false) { last.finish() }
            },
            { count, last in
                for _ in 1..<count { queue.async {} }
                queue.async { last.finish() }
            },
            { count, last in
                for _ in 1..<count { nioLoop.execute {} }
                nioLoop.execute { last.finish() }
            },
            { count, last in
                for _ in 1..<count { foundationThread.perform {} }
                foundationThread.perform { last.finish() }
            },
            { count, last in
                for _ in 1..<count { rawThread.execute {} }
                rawThread.execute { last.finish() }
            },
        ])
        let (threadPerform, loopPerform, spinning) = (rates[0], rates[1], rates[2])
        let (dispatch, nio, foundation, raw) = (rates[3], rates[4], rates[5], rates[6])

        let peers: [Subject: Double] = [
            .dispatch: median(dispatch), .nio: median(nio), .foundation: median(foundation), .raw: median(raw),
        ]
        func ratios(_ lr: Double) -> String {
            "÷Dispatch \(Format.ratio(lr / peers[.dispatch]!)) · ÷NIO \(Format.ratio(lr / peers[.nio]!)) · "
                + "÷Foundation \(Format.ratio(lr / peers[.foundation]!)) · of raw \(Format.percent(lr / peers[.raw]!))"
        }
        func checks(_ lr: Double, _ label: String) -> [TargetCheck] {
            [
                TargetCheck(section: "(a)", target: "\(label) ≥ 2x Dispatch", measured: Format.ratio(lr / peers[.dispatch]!),
                            passed: lr >= 2 * peers[.dispatch]!),
                TargetCheck(section: "(a)", target: "\(label) ≥ 2.5x NIO", measured: Format.ratio(lr / peers[.nio]!),
                            passed: lr >= 2.5 * peers[.nio]!),
                TargetCheck(section: "(a)", target: "\(label) ≥ 50% of raw", measured: Format.percent(lr / peers[.raw]!),
                            passed: lr >= 0.5 * peers[.raw]!),
            ]
        }

        var table = MarkdownTable.subjects(title: "(a) cross-thread submit throughput, 1 producer → 1 resident thread, \(blocks) empty blocks")
        let lrThread = median(threadPerform), lrLoop = median(loopPerform)
        let threadChecks = checks(lrThread, "thread.perform")
        let loopChecks = checks(lrLoop, "loop.perform")
        var values = peers.mapValues(Format.rate)
        values[.loopRuntime] = Format.rate(lrThread)
        table.add(what: "LoopThread.perform(waitUntilDone: false)", values: values,
                  ratios: ratios(lrThread), targets: threadChecks.map(\.short).joined(separator: " · "))
        values[.loopRuntime] = Format.rate(lrLoop)
        table.add(what: "loop.perform { }", values: values,
                  ratios: ratios(lrLoop), targets: loopChecks.map(\.short).joined(separator: " · "))
        let lrSpin = median(spinning)
        table.add(what: "LoopThread.perform, opt-in spinBeforeSleeping \(Format.micros(spinForComparison.nanoseconds))",
                  values: [.loopRuntime: Format.rate(lrSpin)], ratios: ratios(lrSpin), targets: "(opt-in, no target)")
        let spread = { (r: Rates) in "\(r.count)× \(Format.rate(r.min()!))–\(Format.rate(r.max()!))" }
        table.notes = [
            "Median blocks/s of repetitions; ratio = LoopRuntime ÷ peer (> 1: LoopRuntime faster).",
            "Runs, min–max: LoopThread.perform \(spread(threadPerform)); loop.perform \(spread(loopPerform)); "
                + "with spin \(spread(spinning)); "
                + "Dispatch \(spread(dispatch)); NIO \(spread(nio)); Foundation \(spread(foundation)); raw \(spread(raw)).",
            "Dispatch: DispatchQueue(label:) serial, .async. NIO: 1-thread MultiThreadedEventLoopGroup, execute. "
                + "Foundation: RunLoop.perform(inModes: [.common]) + CFRunLoopWakeUp per block. "
                + "raw: Mutex<[block]> + eventfd (written on the empty→non-empty edge) + a thread in epoll_wait.",
        ]
        return (table, threadChecks + loopChecks)
    }

    // MARK: - The driver

    /// One subject's submission: `count - 1` empty blocks and then one that
    /// calls `last.finish()`, all from the calling thread.
    typealias Submit = (_ count: Int, _ last: Finish) -> Void

    /// Warms every subject up with a tenth of the blocks, then runs the
    /// timed repetitions round by round: each round gives every subject one
    /// repetition, in an order that reverses from round to round, so a
    /// slow or fast spell of the machine (these 2-CPU guests have both)
    /// falls on all subjects alike instead of on whichever ran then. A
    /// subject drops out of later rounds once its repetitions have used
    /// `budgetSeconds` (Foundation needs seconds per million).
    private func measureInterleaved(_ subjects: [Submit]) -> [Rates] {
        for submit in subjects {
            let warmUp = Finish()
            submit(Swift.max(blocks / 10, 1), warmUp)
            _ = warmUp.wait()
        }
        var rates = [Rates](repeating: [], count: subjects.count)
        var spent = [UInt64](repeating: 0, count: subjects.count)
        for round in 0..<repetitions {
            let order = round % 2 == 0 ? Array(subjects.indices) : subjects.indices.reversed()
            for i in order where Double(spent[i]) / 1e9 < budgetSeconds {
                sleepSeconds(0.02)  // let the consumer go back to sleep: every run starts from idle
                let finish = Finish()
                let t0 = monotonicNanoseconds()
                subjects[i](blocks, finish)
                let t1 = finish.wait()
                rates[i].append(Double(blocks) / (Double(t1 - t0) / 1e9))
                spent[i] += t1 - t0
            }
        }
        return rates
    }
}
