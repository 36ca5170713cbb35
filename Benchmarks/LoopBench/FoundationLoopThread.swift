import LoopPlatform
import CoreFoundation
import Dispatch
import Foundation
import Synchronization

/// Foundation's run loop as a resident thread, driven the fair way on Linux:
/// `RunLoop.perform` alone does not wake a sleeping loop there (the block
/// waits for some unrelated event), so every perform is followed by
/// `CFRunLoopWakeUp` — what a Foundation user must do to get the block run.
/// The loop is kept alive by a version-0 source that is never signalled (the
/// same trick as an NSPort on Apple's platforms).
final class FoundationLoopThread: Sendable {
    private let handles: Handles
    private let thread: NativeThread
    /// Passes observed at `.afterWaiting` (counted only once `countPasses()` ran).
    private let passCounter = Atomic<Int>(0)

    /// The thread's kernel id.
    var threadID: Int32 { handles.threadID }
    /// The loop's wake-ups since `countPasses()`.
    var passes: Int { passCounter.load(ordering: .relaxed) }

    init(name: String) {
        let ready = DispatchSemaphore(value: 0)
        let box = Mutex<Handles?>(nil)
        thread = NativeThread(name: name) {
            let cfLoop = CFRunLoopGetCurrent()!
            var context = CFRunLoopSourceContext()
            context.perform = { _ in }
            let keepAlive = CFRunLoopSourceCreate(nil, 0, &context)
            CFRunLoopAddSource(cfLoop, keepAlive, kCFRunLoopCommonModes)
            box.withLock { $0 = Handles(runLoop: RunLoop.current, cfRunLoop: cfLoop, threadID: currentThreadID()) }
            ready.signal()
            CFRunLoopRun()  // until CFRunLoopStop
            CFRunLoopSourceInvalidate(keepAlive)
        }
        ready.wait()
        handles = box.withLock { $0! }
    }

    /// Runs `block` on the loop's thread in the common modes (perform + wake-up).
    @inline(__always)
    func perform(_ block: @escaping @Sendable () -> Void) {
        handles.runLoop.perform(inModes: [.common], block: block)
        CFRunLoopWakeUp(handles.cfRunLoop)
    }

    /// Adds `timer` to the loop in the common modes; call on the loop's thread.
    func addOnLoopThread(_ timer: Timer) {
        handles.runLoop.add(timer, forMode: .common)
    }

    /// Installs a CF observer counting `.afterWaiting` passes (wake-ups).
    func countPasses() {
        let installed = Finish()
        perform { [self] in
            let observer = CFRunLoopObserverCreateWithHandler(
                nil, CFRunLoopActivity.afterWaiting.rawValue, true, 0
            ) { [self] _, _ in self.passCounter.add(1, ordering: .relaxed) }
            CFRunLoopAddObserver(CFRunLoopGetCurrent(), observer, kCFRunLoopCommonModes)
            installed.finish()
        }
        _ = installed.wait()
    }

    /// Stops the loop and joins the thread.
    func stop() {
        CFRunLoopStop(handles.cfRunLoop)
        CFRunLoopWakeUp(handles.cfRunLoop)
        thread.join()
    }

    /// The thread's loop objects, published once by the thread before use.
    /// `RunLoop`/`CFRunLoop` are documented thread-safe for perform, wake-up
    /// and stop, which is all other threads call on them.
    private struct Handles: @unchecked Sendable {
        let runLoop: RunLoop
        let cfRunLoop: CFRunLoop
        let threadID: Int32
    }
}
