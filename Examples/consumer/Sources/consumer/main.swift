// The README's "LoopRuntime in one page", as a user's program would hold it.
import LoopRuntime

let loop = Loop.current                      // this thread's loop, made on first use
loop.addCommonMode("tracking")

// A version-0 source: fires on the loop's thread after signal() + wakeUp().
let source = LoopSource(order: 0) { print("signalled") }
loop.add(source, forMode: .default)
source.signal(); loop.wakeUp()

// A timer on its grid, allowed 5 ms late to share a wake-up; never early.
let timer = LoopTimer(after: .milliseconds(100), interval: .milliseconds(100),
                      tolerance: .milliseconds(5)) { _ in print("tick") }
loop.add(timer, forMode: .common)

// A port: messages from any thread wake the loop by themselves.
let port = LoopPort { message in print(message.id, message.payload) }
loop.add(port, forMode: .default)
port.send(id: 100, payload: [1, 2, 3])

// Run with a timeout; the result says why it returned.
switch loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true) {
case .finished, .stopped, .timedOut, .handledSource: break
}

// A resident thread whose loop a port keeps alive.
let worker = LoopThread(name: "w1")
worker.perform(waitUntilDone: true) { print("on w1") }
let answer = try await worker.perform { 6 * 7 }     // async form
print("answer \(answer)")
worker.stop()                                       // runs the stop on w1, joins it
print(loop)                                         // CFRunLoop-style dump
