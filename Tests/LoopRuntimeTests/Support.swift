import Foundation
import LoopPlatform
import Synchronization
import Testing
@testable import LoopRuntime
#if canImport(Glibc)
import Glibc
#endif

// Helpers shared by the rule tests. Two principles: a loop runs on a thread
// the test made (Swift Testing's cooperative pool is tiny, and a pool
// thread's loop would outlive the test), and every wait is bounded and waits
// for an event, never for a guessed duration.

/// A value guarded by the library's pthread-based `Lock`, which
/// ThreadSanitizer understands. (`Synchronization.Mutex` hands a contended
/// lock over inside the uninstrumented runtime, so TSan reports races that
/// are not there.)
final class Guarded<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value  // guarded by lock

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.withLock { body(&value) }
    }
}

/// A thread-safe log of what handlers saw, for asserting order.
final class Recorder<T: Sendable>: Sendable {
    private let items = Guarded<[T]>([])
    init(of: T.Type = T.self) {}
    func append(_ x: T) { items.withLock { $0.append(x) } }
    var all: [T] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// A counter shared with handlers.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.wrappingAdd(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// Waits (bounded, generously) until `condition` holds; never a pass threshold.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// A one-way gate: one thread opens it, others wait for it (bounded).
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func open() { value.store(true, ordering: .releasing) }
    var isOpen: Bool { value.load(ordering: .acquiring) }
    /// Waits until opened; false if it stayed shut for `seconds`.
    @discardableResult
    func wait(_ seconds: Double = 10) -> Bool { eventually(seconds) { isOpen } }
}

/// A value handed from one thread to another.
final class Slot<T: Sendable>: Sendable {
    private let stored: Guarded<T?>
    init(_ initial: T? = nil) { stored = Guarded(initial) }
    func set(_ value: T) { stored.withLock { $0 = value } }
    var value: T? { stored.withLock { $0 } }
    /// Waits until a value was set (bounded).
    func wait(_ seconds: Double = 10) -> T? {
        _ = eventually(seconds) { value != nil }
        return value
    }
}

/// A weak reference that threads can share: tests use it to watch an object
/// go away without keeping it alive.
final class WeakRef<T: AnyObject>: Sendable {
    private struct Holder { weak var object: T? }
    private let holder = Guarded(Holder())
    init(_ object: T? = nil) { holder.withLock { $0.object = object } }
    func set(_ object: T) { holder.withLock { $0.object = object } }
    var object: T? { holder.withLock { $0.object } }
}

// MARK: threads

/// What a started test thread runs; type-erased so the C entry point needs
/// no generic context.
private final class ThreadStart: Sendable {
    let run: @Sendable () -> Void
    init(run: @escaping @Sendable () -> Void) { self.run = run }
}

/// A pthread made by a test, with its result. Its `Loop.current` is a fresh
/// loop, torn down when the thread exits.
final class TestThread<T: Sendable>: Sendable {
    /// For failure messages.
    let name: String
    private let result = Slot<T>()
    private let done = Flag()
    private let handle = Guarded<pthread_t?>(nil)

    /// Starts `body` on a new thread.
    init(_ name: String = "loop-test", _ body: @escaping @Sendable () -> T) {
        self.name = name
        let start = ThreadStart { [result, done] in
            result.set(body())
            done.open()
        }
        var tid = pthread_t()
        let r = pthread_create(&tid, nil, { raw in
            Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, Unmanaged.passRetained(start).toOpaque())
        precondition(r == 0, "pthread_create failed: \(r)")
        handle.withLock { $0 = tid }
    }

    /// Whether the body has returned.
    var isFinished: Bool { done.isOpen }

    /// Waits (bounded) for the body to return and joins the thread; nil, and
    /// a recorded issue, if it did not finish in time (the thread is then
    /// left running, detached).
    func join(_ seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) -> T? {
        guard let tid = handle.withLock({ h -> pthread_t? in defer { h = nil }; return h }) else {
            return result.value  // joined already
        }
        guard done.wait(seconds) else {
            pthread_detach(tid)
            Issue.record("test thread \(name) did not finish within \(seconds) s", sourceLocation: sourceLocation)
            return nil
        }
        pthread_join(tid, nil)
        return result.value
    }
}

/// Runs `body` on a new pthread (where `Loop.current` is that thread's fresh
/// loop), joins it and returns the result. The body must bound its own
/// waits; if it has not finished after 60 s the process stops with a message
/// rather than hang the suite.
func onThread<T: Sendable>(_ name: String = "on-thread", _ body: @escaping @Sendable () -> T) -> T {
    guard let value = TestThread(name, body).join(60) else {
        fatalError("onThread(\(name)): body did not finish within 60 s")
    }
    return value
}

// MARK: loops

/// Puts the calling thread's `loop` on `clock` and consumes the wake-up that
/// switching clocks requests, so the test's first pass is an ordinary one
/// (the switch leaves "next wait returns at once" pending, R19).
func useManualClock(_ clock: ManualClock, on loop: Loop) {
    precondition(loop.isCurrentThread, "useManualClock runs a pass, so it needs the loop's own thread")
    loop.clock = .manual(clock)
    let settle: Loop.Mode = "loopd.tests.settle"
    let keep = LoopSource {}
    loop.add(keep, forMode: settle)
    _ = loop.run(mode: settle, timeout: .zero)
    keep.invalidate()
}

/// Waits (bounded) until `loop` sleeps in the kernel.
@discardableResult
func waitUntilSleeping(_ loop: Loop, _ seconds: Double = 10) -> Bool {
    eventually(seconds) { loop.isWaiting }
}

/// A source that is never signalled: it keeps a mode from being empty (R3).
func keepAlive() -> LoopSource { LoopSource {} }

extension LoopInstant {
    /// `self + d`, for readable expectations.
    static func + (a: LoopInstant, d: Duration) -> LoopInstant { a.advanced(by: d) }
}

/// Names of activities, for readable sequences.
func activityName(_ activity: Loop.Activity) -> String { activity.description }

/// An observer of `activities` that appends each activity's name to `log`.
func activityLogger(_ log: Recorder<String>, _ activities: Loop.Activity = .all, order: Int = 0) -> LoopObserver {
    LoopObserver(activities: activities, order: order) { _, activity in log.append(activityName(activity)) }
}

/// The name of the loop's current mode, "none" outside a run.
func modeName(_ loop: Loop) -> String { loop.currentMode?.rawValue ?? "none" }

/// Keeps a wedged `LoopThread` alive for the rest of the process, so that a
/// failing test does not hang in its deinit (which joins the thread).
func abandon(_ thread: LoopThread) { abandonedThreads.withLock { $0.append(thread) } }
private let abandonedThreads = Guarded<[LoopThread]>([])

// MARK: bounded versions of the library's blocking calls

/// Queues an empty request on `worker` and waits (bounded) until it ran:
/// the worker's loop has then run a pass begun after this call.
@discardableResult
func roundTrip(_ worker: LoopThread, modes: [Loop.Mode]? = nil, _ seconds: Double = 10) -> Bool {
    let ran = Flag()
    guard worker.perform(waitUntilDone: false, modes: modes, { ran.open() }) else { return false }
    return ran.wait(seconds)
}

/// Calls `body` (which may block in the library: `perform(waitUntilDone:)`,
/// `stop()`) on another thread and waits for it, bounded; nil, with an
/// issue recorded, if it did not return in time.
func bounded<T: Sendable>(_ seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation,
                          _ body: @escaping @Sendable () -> T) -> T? {
    TestThread("bounded", body).join(seconds, sourceLocation: sourceLocation)
}

/// `worker.stop()` (which joins the thread), bounded: a thread that does not
/// stop fails the test and is abandoned instead of hanging the suite.
func shutDown(_ worker: LoopThread, sourceLocation: SourceLocation = #_sourceLocation) {
    if bounded(sourceLocation: sourceLocation, { worker.stop() }) == nil { abandon(worker) }
}

/// Runs `body` (which runs the calling thread's `loop`) with a watchdog that
/// stops the loop if it is still running after `seconds` of real time, and
/// records an issue: a run that should end by itself (on a manual clock,
/// whose time never passes, or with no timeout) cannot hang the suite.
func withWatchdog<T>(_ loop: Loop, seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
                     _ body: () -> T) -> T {
    let done = Flag()
    let watchdog = TestThread("watchdog") { () -> Bool in
        if done.wait(seconds) { return false }
        loop.stop()
        return true
    }
    let result = body()
    done.open()
    if watchdog.join() == true {
        Issue.record("the run did not end by itself within \(seconds) s; stopped it", sourceLocation: sourceLocation)
    }
    return result
}

/// `loop.run(mode:timeout:returnAfterSourceHandled:)` under `withWatchdog`.
func boundedRun(_ loop: Loop, mode: Loop.Mode = .default, timeout: Duration? = .seconds(10),
                returnAfterSourceHandled: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) -> Loop.RunResult {
    withWatchdog(loop, sourceLocation: sourceLocation) {
        loop.run(mode: mode, timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled)
    }
}

/// Runs `program`, built beside the test bundle (Tests/Programs, the
/// examples), with `arguments`; expects it to exit 0 and returns its
/// standard output's lines. For what needs a process of its own: a main
/// thread that runs `Loop.main`.
func runProgram(_ program: String, _ arguments: [String] = []) throws -> [String] {
    let dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    let process = Process()
    process.executableURL = dir.appendingPathComponent(program)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}
