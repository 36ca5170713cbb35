import LoopPlatform
import Dispatch
import Foundation
import LoopRuntime
import NIOCore
import NIOPosix

/// Measures the RSS that N idle loop threads add, in a fresh child process
/// per subject, so no subject inherits heap, malloc arenas or paged-in code
/// left behind by an earlier one.
enum RSSProbe {
    struct Result: Sendable {
        /// VmRSS added, bytes.
        var resident: Int
        /// RssAnon added, bytes.
        var anonymous: Int
    }

    /// The argument that makes `main` run `child(_:threads:)` instead of the benchmark.
    static let flag = "--rss-probe"

    /// Parent side: runs `LoopBench --rss-probe SUBJECT N` and parses its one
    /// line "resident anonymous"; nil if the child failed (bounded at 30 s).
    static func measure(_ subject: Subject, threads: Int) -> Result? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [flag, subject.rawValue, String(threads)]
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return nil }
        // The child prints one short line, far below a pipe's buffer, so it
        // never blocks on us: wait for it first, then read.
        let deadline = monotonicNanoseconds() + 30_000_000_000
        while process.isRunning && monotonicNanoseconds() < deadline { sleepSeconds(0.01) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return nil
        }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0 else { return nil }
        let fields = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard fields.count == 2 else { return nil }
        return Result(resident: fields[0], anonymous: fields[1])
    }

    /// Child side: warm up with one thread, then start `threads` idle ones and
    /// print the RSS they added. Returns the process exit code.
    static func child(_ name: String, threads: Int) -> Int32 {
        guard let subject = Subject(rawValue: name), threads > 0 else { return 2 }
        // Warm-up with one: pages in the code and one-time globals of the subject.
        startIdle(subject, count: 1)()
        _ = MemorySample()  // pages in the sampler's own code, so `after` does not count it
        sleepSeconds(0.1)
        let before = MemorySample()
        let stop = startIdle(subject, count: threads)
        sleepSeconds(0.2)
        let after = MemorySample()
        print(after.resident - before.resident, after.anonymous - before.anonymous)
        stop()
        return 0
    }

    /// Starts `count` idle loop threads of `subject`, each having run one
    /// block (so its stack and per-thread state are real); returns the
    /// closure that stops them.
    private static func startIdle(_ subject: Subject, count: Int) -> () -> Void {
        switch subject {
        case .loopRuntime:
            let workers = (0..<count).map { LoopThread(name: "rss-lr-\($0)") }
            for worker in workers { worker.perform(waitUntilDone: true) {} }
            return { for worker in workers { worker.stop() } }
        case .nio:
            let group = MultiThreadedEventLoopGroup(numberOfThreads: count)
            for loop in group.makeIterator() { _ = try? loop.submit {}.wait() }
            return { try? group.syncShutdownGracefully() }
        case .dispatch:
            // An idle serial queue owns no thread; this shows what running one block on each leaves behind.
            let queues = (0..<count).map { DispatchQueue(label: "rss-dispatch-\($0)") }
            for queue in queues { runAndWait { queue.async(execute: $0) } }
            return {}
        case .foundation:
            let loops = (0..<count).map { FoundationLoopThread(name: "rss-cf-\($0)") }
            for loop in loops { runAndWait { loop.perform($0) } }
            return { for loop in loops { loop.stop() } }
        case .raw:
            let loops = (0..<count).map { RawLoopThread(name: "rss-raw-\($0)") }
            for loop in loops { runAndWait { loop.execute($0) } }
            return { for loop in loops { loop.stop() } }
        }
    }

    /// Posts one block with `post` and waits until it has run.
    private static func runAndWait(_ post: (@escaping @Sendable () -> Void) -> Void) {
        let ran = Finish()
        post { ran.finish() }
        _ = ran.wait()
    }
}
