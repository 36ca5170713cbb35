import LoopPlatform
import Dispatch
import LoopRuntime
import NIOCore
import NIOPosix
import Synchronization

/// (d) What an idle loop costs. All idle subjects run at once (idle threads
/// do not compete for the CPUs): after a settling pause, each thread's CPU
/// time and voluntary context switches are sampled from /proc, and loop
/// passes counted by an `.afterWaiting` observer where the loop has one.
struct IdleBenchmark {
    let seconds: Double
    /// RSS probe: how many idle loop threads each child process starts.
    let threadCount = 8

    /// One idle thread under watch.
    private struct Watched {
        let tid: Int32
        /// Loop passes (wake-ups) so far, when the subject can count them.
        let passes: (() -> Int)?
    }

    func run() -> (MarkdownTable, [TargetCheck]) {
        print("(d) idle: \(Format.fixed(seconds, 1)) s of idle loops, then RSS of \(threadCount) idle threads per subject …")
        // Start every subject and let it settle into its wait.
        let lr = LoopThread(name: "bench-idle-lr")
        let lrPasses = SharedInt()
        let observer = LoopObserver(activities: .afterWaiting, repeats: true, order: 0) { _, _ in lrPasses.increment() }
        lr.loop.add(observer, forMode: .common)
        let lrTID = SharedInt()
        lr.perform(waitUntilDone: true) { lrTID.set(Int(currentThreadID())) }
        // The same with the opt-in spin: it spins once after its last block, then sleeps.
        let lrSpin = LoopThread(name: "bench-idle-lrs", spinBeforeSleeping: spinForComparison)
        let lrSpinTID = SharedInt()
        lrSpin.perform(waitUntilDone: true) { lrSpinTID.set(Int(currentThreadID())) }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let nioTID = (try? group.next().submit { currentThreadID() }.wait()) ?? 0

        let cf = FoundationLoopThread(name: "bench-idle-cf")
        cf.countPasses()

        let raw = RawLoopThread(name: "bench-idle-raw")
        let rawTID = SharedInt()
        let rawReady = Finish()
        raw.execute { rawTID.set(Int(currentThreadID())); rawReady.finish() }
        _ = rawReady.wait()

        let watched: [Subject: Watched] = [
            .loopRuntime: Watched(tid: Int32(lrTID.value), passes: { lrPasses.value }),
            .nio: Watched(tid: nioTID, passes: nil),
            .foundation: Watched(tid: cf.threadID, passes: { cf.passes }),
            .raw: Watched(tid: Int32(rawTID.value), passes: { raw.passes }),
        ]

        sleepSeconds(0.3)
        let before = watched.mapValues { (ThreadSample(tid: $0.tid), $0.passes?()) }
        let spinBefore = ThreadSample(tid: Int32(lrSpinTID.value))
        let cpu0 = processCPUNanoseconds()
        sleepSeconds(seconds)
        let processCPU = processCPUNanoseconds() - cpu0
        let after = watched.mapValues { (ThreadSample(tid: $0.tid), $0.passes?()) }
        let spinIdle = spinBefore.flatMap { b in ThreadSample(tid: Int32(lrSpinTID.value)).map { (b, $0) } }

        lr.stop()
        lrSpin.stop()
        try? group.syncShutdownGracefully()
        cf.stop()
        raw.stop()

        var switches: [Subject: Int64] = [:], cpu: [Subject: Int64] = [:], passes: [Subject: Int] = [:]
        for subject in watched.keys {
            guard let b = before[subject]?.0, let a = after[subject]?.0 else { continue }
            switches[subject] = a.voluntarySwitches - b.voluntarySwitches
            cpu[subject] = a.cpuNanoseconds - b.cpuNanoseconds
            if let pb = before[subject]?.1, let pa = after[subject]?.1 { passes[subject] = pa - pb }
        }

        let rss = Subject.allCases.reduce(into: [Subject: RSSProbe.Result]()) { $0[$1] = RSSProbe.measure($1, threads: threadCount) }
        let trickle = SpinCost(seconds: min(seconds, 2), interval: 0.001).measure()
        var (table, checks) = report(switches: switches, cpu: cpu, passes: passes, processCPU: processCPU, rss: rss)
        let spinLabel = "spinBeforeSleeping \(Format.micros(spinForComparison.nanoseconds))"
        if let (b, a) = spinIdle {
            table.add(what: "idle with opt-in \(spinLabel): context switches, CPU time",
                      values: [.loopRuntime: "\(a.voluntarySwitches - b.voluntarySwitches), \(Format.micros(a.cpuNanoseconds - b.cpuNanoseconds))"],
                      targets: a.voluntarySwitches == b.voluntarySwitches ? "no wake-ups" : "WOKE UP")
        }
        table.add(what: "a block every 1 ms: thread CPU per second, without / with \(spinLabel)",
                  values: [.loopRuntime: "\(Format.fixed(trickle.plain * 100, 1))% / \(Format.fixed(trickle.spinning * 100, 1))% of a core"],
                  targets: "(the spin's price)")
        return (table, checks)
    }

    private func report(switches: [Subject: Int64], cpu: [Subject: Int64], passes: [Subject: Int], processCPU: Int64,
                        rss: [Subject: RSSProbe.Result]) -> (MarkdownTable, [TargetCheck]) {
        var table = MarkdownTable.subjects(title: "(d) idle loop over \(Format.fixed(seconds, 1)) s, and RSS of \(threadCount) idle loop threads")
        let lrWakeUps = max(Int64(passes[.loopRuntime] ?? 0), switches[.loopRuntime] ?? 0)
        let wakeCheck = TargetCheck(section: "(d)", target: "zero wake-ups while idle",
                                    measured: "\(passes[.loopRuntime].map(String.init) ?? "?") passes, \(switches[.loopRuntime].map(String.init) ?? "?") switches",
                                    passed: switches[.loopRuntime] != nil ? lrWakeUps == 0 : nil)
        table.add(what: "loop passes (.afterWaiting / epoll returns)", values: passes.mapValues(String.init),
                  targets: wakeCheck.short)
        table.add(what: "voluntary context switches of the thread", values: switches.mapValues(String.init))
        table.add(what: "CPU time of the thread", values: cpu.mapValues(Format.micros))

        let lrRSS = rss[.loopRuntime]
        let rssCheck = TargetCheck(section: "(d)", target: "\(threadCount) idle threads add ≤ 1 MB RSS",
                                   measured: lrRSS.map { Format.megabytes($0.resident) } ?? "?",
                                   passed: lrRSS.map { $0.resident <= 1_048_576 })
        let nioRatio = lrRSS.flatMap { lr in rss[.nio].map { "÷NIO \(Format.ratio(Double(lr.resident) / Double($0.resident)))" } } ?? ""
        table.add(what: "RSS added by \(threadCount) idle threads (VmRSS)", values: rss.mapValues { Format.megabytes($0.resident) },
                  ratios: nioRatio, targets: rssCheck.short)
        table.add(what: "  of which anonymous (RssAnon)", values: rss.mapValues { Format.megabytes($0.anonymous) })
        table.notes = [
            "Idle subjects ran concurrently (idle threads do not compete); whole process CPU in the window: "
                + "\(Format.micros(processCPU)). Dispatch has no resident thread to watch: an idle serial queue owns none.",
            "Wake-ups: voluntary context switches (/proc/self/task/TID/status) count every sleep → wake; "
                + "passes: LoopRuntime LoopObserver(.afterWaiting) in .common, Foundation CFRunLoopObserver(kCFRunLoopAfterWaiting), raw epoll_wait returns.",
            "RSS: each subject in a fresh child process (`LoopBench --rss-probe SUBJECT`): one thread started and stopped "
                + "as warm-up, then VmRSS before/after starting \(threadCount) that each ran one block, 0.2 s settle. "
                + "NIO: MultiThreadedEventLoopGroup(numberOfThreads: \(threadCount)). Dispatch: \(threadCount) serial queues that each ran one block. "
                + "1 MB = 2^20 bytes.",
        ]
        return (table, [wakeCheck, rssCheck])
    }
}

/// An Int shared with loop threads: a counter, or a slot written once.
final class SharedInt: Sendable {
    private let storage = Atomic<Int>(0)
    func increment() { storage.add(1, ordering: .relaxed) }
    func set(_ value: Int) { storage.store(value, ordering: .releasing) }
    var value: Int { storage.load(ordering: .acquiring) }
}
