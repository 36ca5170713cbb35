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
        print("(a) throughput: \(blocks) blocks × up to \(repetitions) repetitions per subject …")
        let threadPerform = measureLoopThreadPerform()
        let loopPerform = measureLoopPerform()
        let spinning = measureLoopThreadPerform(spin: spinForComparison)
        let dispatch = measureDispatch()
        let nio = measureNIO()
        let foundation = measureFoundation()
        let raw = measureRaw()

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

    /// Runs a warm-up of a tenth of the blocks, then the timed repetitions.
    /// `submitAll(n, finish)` must submit `n - 1` empty blocks and then one
    /// that calls `finish.finish()`, all from the calling thread.
    private func measure(_ submitAll: (_ count: Int, _ last: Finish) -> Void) -> Rates {
        let warmUp = Finish()
        submitAll(Swift.max(blocks / 10, 1), warmUp)
        _ = warmUp.wait()
        var rates: Rates = []
        let started = monotonicNow()
        for _ in 0..<repetitions {
            sleepSeconds(0.02)  // let the consumer go back to sleep: every run starts from idle
            let finish = Finish()
            let t0 = monotonicNow()
            submitAll(blocks, finish)
            let t1 = finish.wait()
            rates.append(Double(blocks) / (Double(t1 - t0) / 1e9))
            if Double(monotonicNow() - started) / 1e9 > budgetSeconds { break }
        }
        return rates
    }

    // MARK: - Subjects (each loop calls its API directly: no per-block indirection)

    private func measureLoopThreadPerform(spin: Duration = .zero) -> Rates {
        let worker = LoopThread(name: "bench-lr", spinBeforeSleeping: spin)
        defer { worker.stop() }
        return measure { count, last in
            for _ in 1..<count { worker.perform(waitUntilDone: false) {} }
            worker.perform(waitUntilDone: false) { last.finish() }
        }
    }

    private func measureLoopPerform() -> Rates {
        let worker = LoopThread(name: "bench-lr-loop")
        defer { worker.stop() }
        let loop = worker.loop
        return measure { count, last in
            for _ in 1..<count { loop.perform {} }
            loop.perform { last.finish() }
        }
    }

    private func measureDispatch() -> Rates {
        let queue = DispatchQueue(label: "bench-dispatch")
        return measure { count, last in
            for _ in 1..<count { queue.async {} }
            queue.async { last.finish() }
        }
    }

    private func measureNIO() -> Rates {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        return measure { count, last in
            for _ in 1..<count { loop.execute {} }
            loop.execute { last.finish() }
        }
    }

    private func measureFoundation() -> Rates {
        let thread = FoundationLoopThread(name: "bench-foundation")
        defer { thread.stop() }
        return measure { count, last in
            for _ in 1..<count { thread.perform {} }
            thread.perform { last.finish() }
        }
    }

    private func measureRaw() -> Rates {
        let thread = RawLoopThread(name: "bench-raw")
        defer { thread.stop() }
        return measure { count, last in
            for _ in 1..<count { thread.execute {} }
            thread.execute { last.finish() }
        }
    }
}
