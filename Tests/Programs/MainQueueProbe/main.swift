// Runs one scenario of R3/R27 on a real main thread (the test runner's main
// thread belongs to the runner) and prints what happened, one fact a line,
// for MainQueueTests to check. The entry point stays synchronous: an async
// main would hand the main thread to dispatchMain().
import Dispatch
import Glibc  // exit
import LoopRuntime

let loop = Loop.main
nonisolated(unsafe) var order: [String] = []

// A scenario that fails must not hang its test: after 60 s the process
// ends with status 3, from another thread, without touching the loop.
DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(60)) {
    print("the scenario did not end in time")
    exit(3)
}

switch CommandLine.arguments.dropFirst().first ?? "" {
case "default":
    // A main loop with nothing but a queued main-queue block: the run waits
    // for it, runs it and is then stopped by it.
    DispatchQueue.main.async {
        print("block ran on main = \(Loop.isMainThread)")
        loop.stop()
    }
    print("run returned \(loop.run(mode: .default, timeout: .seconds(30)))")

case "later":
    // The block arrives while the run already sleeps: it wakes the loop.
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
        DispatchQueue.main.async {
            print("late block ran on main = \(Loop.isMainThread)")
            loop.stop()
        }
    }
    print("run returned \(loop.run(mode: .default, timeout: .seconds(30)))")

case "common":
    loop.addCommonMode("tracking")
    DispatchQueue.main.async {
        print("block ran in mode \(loop.currentMode?.rawValue ?? "none")")
        loop.stop()
    }
    print("run returned \(loop.run(mode: "tracking", timeout: .seconds(30)))")

case "private":
    // A mode outside the common set does not serve the queue: with nothing
    // of its own the run finishes at once and the block stays queued.
    nonisolated(unsafe) var ran = false
    DispatchQueue.main.async {
        ran = true
        loop.stop()
    }
    print("private run returned \(loop.run(mode: "private", timeout: .seconds(30)))")
    print("ran during the private run = \(ran)")
    print("default run returned \(loop.run(mode: .default, timeout: .seconds(30)))")
    print("ran after the default run = \(ran)")

case "nested":
    // Inside a main-queue block the queue is not counted: a nested default
    // run with nothing else finishes at once, and a block queued from the
    // outer one runs after it returns, never inside it.
    DispatchQueue.main.async {
        order.append("outer start")
        DispatchQueue.main.async {
            order.append("inner block")
            print("order: \(order.joined(separator: ", "))")
            loop.stop()
        }
        print("nested run returned \(loop.run(mode: .default, timeout: .seconds(5)))")
        order.append("outer end")
    }
    print("run returned \(loop.run(mode: .default, timeout: .seconds(30)))")

case "mainactor":
    Task.detached {
        await MainActor.run {
            print("main actor work on main = \(Loop.isMainThread)")
            loop.stop()
        }
    }
    print("run returned \(loop.run(mode: .default, timeout: .seconds(30)))")

case "forever":
    // run() with no timeout: served, then stopped from a block.
    DispatchQueue.main.async {
        print("block ran")
        loop.stop()
    }
    loop.run()
    print("run() returned")

case "taskexecutor":
    // Loop.main as a task executor: the task's jobs wait while the main
    // thread is busy outside its loop (R2), then run on it during the run,
    // across awaits.
    Task(executorPreference: loop.taskExecutor) {
        order.append("task on main = \(Loop.isMainThread)")
        await Task.yield()
        try? await Task.sleep(for: .milliseconds(1))
        order.append("after awaits on main = \(Loop.isMainThread)")
        loop.stop()
    }
    usleep(100_000)
    print("ran before the run = \(!order.isEmpty)")
    print("run returned \(loop.run(mode: .default, timeout: .seconds(30)))")
    for line in order { print(line) }

default:
    print("usage: MainQueueProbe default|later|common|private|nested|mainactor|forever|taskexecutor")
}
