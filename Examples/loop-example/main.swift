// A tour of LoopRuntime on the main thread: a timer, a port, a resident
// worker, and the Dispatch main queue and @MainActor served by Loop.main
// (R27). Run it with `swift run loop-example`; the R27 test runs it too.
// The entry point stays synchronous: an async main would hand the main
// thread to dispatchMain() and no Loop could serve the main queue.
import Dispatch
import LoopRuntime

@MainActor func onMainActor() -> Bool { Loop.isMainThread }

let loop = Loop.main
let worker = LoopThread(name: "example-worker")

// A port: messages from any thread wake the main loop by themselves (R9).
let port = LoopPort { message in
    print("port: message \(message.id) with \(message.payload.count) bytes on main = \(Loop.isMainThread)")
}
loop.add(port, forMode: .common)

// A resident worker does some work and answers through the port.
worker.perform {
    port.send(id: 7, payload: Array("from the worker".utf8))
}

// The Dispatch main queue and @MainActor work run on this thread because
// Loop.main is running (R27).
DispatchQueue.global().async {
    DispatchQueue.main.async {
        print("dispatch: main queue block on main = \(Loop.isMainThread)")
    }
    Task.detached {
        let onMain = await onMainActor()
        print("actor: @MainActor function on main = \(onMain)")
    }
}

// A repeating timer with tolerance; it stops the loop on its third fire.
var fires = 0
let timer = LoopTimer(after: .milliseconds(20), interval: .milliseconds(20), tolerance: .milliseconds(2)) { timer in
    MainActor.assumeIsolated {
        fires += 1
        print("timer: fire \(fires)")
        if fires == 3 {
            timer.invalidate()
            loop.stop()
        }
    }
}
loop.add(timer, forMode: .default)

print(loop)
let result = loop.run(mode: .default, timeout: .seconds(30))
print("run returned \(result)")

// Only the default and common modes serve the main queue (R27): a run in a
// private mode leaves the block queued until a default-mode run.
let served = LoopPort { _ in }
loop.add(served, forMode: "private")
nonisolated(unsafe) var inPrivateMode = true
DispatchQueue.main.async {
    print("dispatch: block held during the private mode ran afterwards = \(!inPrivateMode)")
    loop.stop()
}
_ = loop.run(mode: "private", timeout: .milliseconds(200))
inPrivateMode = false
_ = loop.run(mode: .default, timeout: .seconds(30))
worker.stop()
