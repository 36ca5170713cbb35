import LoopPlatform
import LoopRuntime

/// The spin the benchmark compares (`LoopThread(spinBeforeSleeping:)`),
/// an opt-in that costs CPU: see `SpinCost`.
let spinForComparison: Duration = .microseconds(50)

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// What the opt-in spin costs in CPU: a resident thread fed one empty block
/// every `interval` for `seconds`, with and without the spin; the figure is
/// the thread's CPU time (schedstat) per second of wall time.
struct SpinCost {
    let seconds: Double
    let interval: Double

    /// Thread CPU per wall second, without and with `spinForComparison`.
    func measure() -> (plain: Double, spinning: Double) {
        (cpuPerSecond(spin: .zero), cpuPerSecond(spin: spinForComparison))
    }

    private func cpuPerSecond(spin: Duration) -> Double {
        let worker = LoopThread(name: "bench-spincost", spinBeforeSleeping: spin)
        defer { worker.stop() }
        let tid = SharedInt()
        worker.perform(waitUntilDone: true) { tid.set(Int(currentThreadID())) }
        sleepSeconds(0.1)
        guard let before = ThreadSample(tid: Int32(tid.value)) else { return .nan }
        let start = monotonicNanoseconds()
        let ticks = Int(seconds / interval)
        for _ in 0..<ticks {
            worker.perform {}
            sleepSeconds(interval)
        }
        guard let after = ThreadSample(tid: Int32(tid.value)) else { return .nan }
        let wall = Double(monotonicNanoseconds() - start)
        return Double(after.cpuNanoseconds - before.cpuNanoseconds) / wall
    }
}
