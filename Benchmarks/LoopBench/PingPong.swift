import LoopPlatform
import Dispatch
import LoopRuntime
import NIOCore
import NIOPosix

/// Something that runs posted blocks one at a time, in order, on its own
/// thread (or, for Dispatch, its own serial queue).
protocol Lane: Sendable {
    func post(_ block: @escaping @Sendable () -> Void)
}

struct LoopThreadLane: Lane {
    let thread: LoopThread
    func post(_ block: @escaping @Sendable () -> Void) { thread.perform(waitUntilDone: false, block) }
}

struct DispatchLane: Lane {
    let queue: DispatchQueue
    func post(_ block: @escaping @Sendable () -> Void) { queue.async(execute: block) }
}

struct NIOLane: Lane {
    let loop: any EventLoop
    func post(_ block: @escaping @Sendable () -> Void) { loop.execute(block) }
}

struct FoundationLane: Lane {
    let thread: FoundationLoopThread
    func post(_ block: @escaping @Sendable () -> Void) { thread.perform(block) }
}

struct RawLane: Lane {
    let thread: RawLoopThread
    func post(_ block: @escaping @Sendable () -> Void) { thread.execute(block) }
}

/// (b) Round trip between two resident threads: A posts to B a block that
/// posts back to A; the time from A's post to A running the reply is one
/// sample. Each subject runs unpinned first, then with every thread of the
/// process pinned to CPU 0 (what `taskset -c 0` does).
struct PingPongBenchmark {
    let rounds: Int
    let warmUpRounds: Int
    /// Per subject and scheduling mode; a subject stops early past it.
    let budgetSeconds: Double

    /// One subject in one scheduling mode.
    struct Result {
        let samples: Percentiles
        /// Process CPU time ÷ wall time during the run: 1.0 = one core busy.
        let coresBusy: Double
    }

    func run() -> (MarkdownTable, [TargetCheck]) {
        print("(b) ping-pong: \(rounds) round trips per subject, default scheduling then pinned …")
        var results: [String: [Subject: Result]] = [:]
        var spinning: [String: Result] = [:]
        for pinned in [false, true] {
            let mode = pinned ? "pinned" : "default"
            if pinned { Affinity.pinAll(to: 0) }
            defer { if pinned { Affinity.restore() } }
            var row: [Subject: Result] = [:]
            row[.loopRuntime] = withLanes(make: { LoopThreadLane(thread: LoopThread(name: "bench-pp-\($0)")) },
                                          stop: { $0.thread.stop() })
            spinning[mode] = withLanes(make: {
                LoopThreadLane(thread: LoopThread(name: "bench-pps-\($0)", spinBeforeSleeping: spinForComparison))
            }, stop: { $0.thread.stop() })
            row[.dispatch] = withLanes(make: { DispatchLane(queue: DispatchQueue(label: "bench-pp-\($0)")) }, stop: { _ in })
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            let loops = Array(group.makeIterator())
            row[.nio] = measure(a: NIOLane(loop: loops[0]), b: NIOLane(loop: loops[1]))
            try? group.syncShutdownGracefully()
            row[.foundation] = withLanes(make: { FoundationLane(thread: FoundationLoopThread(name: "bench-pp-\($0)")) },
                                         stop: { $0.thread.stop() })
            row[.raw] = withLanes(make: { RawLane(thread: RawLoopThread(name: "bench-pp-\($0)")) }, stop: { $0.thread.stop() })
            results[mode] = row
        }
        return report(results, spinning: spinning)
    }

    private func withLanes<L: Lane>(make: (String) -> L, stop: (L) -> Void) -> Result {
        let a = make("a"), b = make("b")
        defer { stop(a); stop(b) }
        return measure(a: a, b: b)
    }

    private func measure(a: some Lane, b: some Lane) -> Result {
        let warm = PingPongRun(a: a, b: b, rounds: warmUpRounds, budgetSeconds: budgetSeconds)
        _ = warm.run()
        let cpu0 = processCPUNanoseconds(), wall0 = monotonicNanoseconds()
        let samples = PingPongRun(a: a, b: b, rounds: rounds, budgetSeconds: budgetSeconds).run()
        let cpu = processCPUNanoseconds() - cpu0, wall = monotonicNanoseconds() - wall0
        return Result(samples: Percentiles(samples), coresBusy: Double(cpu) / Double(wall))
    }

    private func report(_ results: [String: [Subject: Result]], spinning: [String: Result]) -> (MarkdownTable, [TargetCheck]) {
        var table = MarkdownTable.subjects(title: "(b) ping-pong round trip between two resident threads")
        var checks: [TargetCheck] = []
        for mode in ["default", "pinned"] {
            guard let row = results[mode], let lr = row[.loopRuntime], let nio = row[.nio] else { continue }
            let label = mode == "pinned" ? "pinned to CPU 0" : "default scheduling"
            for (name, pick) in [("p50", { (p: Percentiles) in p.p50 }), ("p99", { (p: Percentiles) in p.p99 })] {
                let ratios = Subject.allCases.dropFirst().map { peer in
                    "÷\(peer.rawValue) \(Format.ratio(Double(pick(lr.samples)) / Double(pick(row[peer]!.samples))))"
                }.joined(separator: " · ")
                var targets = ""
                if name == "p50" {
                    let check = TargetCheck(section: "(b)", target: "p50 (\(mode)) ≤ NIO",
                                            measured: "\(Format.micros(lr.samples.p50)) vs \(Format.micros(nio.samples.p50))",
                                            passed: lr.samples.p50 <= nio.samples.p50)
                    checks.append(check)
                    targets = check.short
                }
                table.add(what: "round trip \(name), \(label)", values: row.mapValues { Format.micros(pick($0.samples)) },
                          ratios: ratios, targets: targets)
            }
            table.add(what: "cores busy during run, \(label)", values: row.mapValues { Format.fixed($0.coresBusy, 2) })
            if let spin = spinning[mode] {
                let nioRatio = "÷NIO \(Format.ratio(Double(spin.samples.p50) / Double(nio.samples.p50)))"
                table.add(what: "round trip p50 / p99, \(label), opt-in spinBeforeSleeping \(Format.micros(spinForComparison.nanoseconds))",
                          values: [.loopRuntime: "\(Format.micros(spin.samples.p50)) / \(Format.micros(spin.samples.p99))"],
                          ratios: nioRatio, targets: "(opt-in, no target)")
                table.add(what: "cores busy during run, \(label), with that spin",
                          values: [.loopRuntime: Format.fixed(spin.coresBusy, 2)])
            }
        }
        let counts = results["default"].map { row in
            Subject.allCases.map { "\($0.rawValue) \(row[$0]!.samples.count)" }.joined(separator: ", ")
        } ?? ""
        table.notes = [
            "ratio = LoopRuntime ÷ peer (< 1: LoopRuntime faster). Samples per subject (default): \(counts).",
            "Pinned = every thread of the process bound to CPU 0 in-process (sched_setaffinity), as under `taskset -c 0`; "
                + "threads created meanwhile (Dispatch's pool) inherit it.",
            "Unpinned round trips can be bimodal on a 2-vCPU guest (a hop costs a few µs when the other thread is still "
                + "running, tens of µs when its CPU must be woken); p50 vs p99 shows which mode dominated this run.",
            "Dispatch: two serial queues. NIO: a 2-thread group, execute. Foundation: two RunLoop threads, perform + CFRunLoopWakeUp. "
                + "raw: two raw epoll threads.",
        ]
        return (table, checks)
    }
}

/// One series of round trips. Its fields are touched only by blocks running
/// on lane A, one at a time; each round's hop through B orders it after the
/// previous one, so the class needs no lock (hence `@unchecked Sendable`).
private final class PingPongRun<A: Lane, B: Lane>: @unchecked Sendable {
    let a: A, b: B
    let rounds: Int
    let deadline: UInt64
    let done = Finish()
    var samples: [Int64] = []
    var sent: UInt64 = 0

    init(a: A, b: B, rounds: Int, budgetSeconds: Double) {
        self.a = a
        self.b = b
        self.rounds = rounds
        deadline = monotonicNanoseconds() + UInt64(budgetSeconds * 1e9)
        samples.reserveCapacity(rounds)
    }

    /// Runs the series from lane A; returns the round-trip times.
    func run() -> [Int64] {
        a.post { self.serve() }
        guard done.wait(seconds: Double(deadline - monotonicNanoseconds()) / 1e9 + 10) != nil else {
            fatalError("ping-pong stalled: a posted block never ran")
        }
        return samples
    }

    /// On lane A: start a round.
    private func serve() {
        sent = monotonicNanoseconds()
        b.post { self.a.post { self.returned() } }
    }

    /// On lane A: the reply arrived.
    private func returned() {
        let now = monotonicNanoseconds()
        samples.append(Int64(now - sent))
        if samples.count < rounds && now < deadline { serve() } else { done.finish() }
    }
}
