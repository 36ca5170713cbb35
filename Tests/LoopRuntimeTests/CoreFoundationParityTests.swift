import CoreFoundation
import Testing
@testable import LoopRuntime

/// R17, R20, R21 checked against Core Foundation's own engine: each scenario
/// runs once on CFRunLoop (swift-corelibs-foundation's, which ships with the
/// toolchain) and once on LoopRuntime, on a fresh thread each, and the two
/// traces must be the same. The expected trace is written out too, so a
/// change in either engine shows which one moved.
@Suite struct CoreFoundationParityTests {
    @Test func R20_R21_aStopMarksTheRunInProgressNotARunNestedAfterIt() {
        expectSameTrace(["nested timedOut", "outer stopped"]) { engine in
            let handler = engine.addSource(order: 0) { engine in
                engine.stop()
                engine.log("nested \(engine.run(timeout: 0.02))")
            }
            engine.signal(handler)
            engine.log("outer \(engine.run(timeout: 10))")
        }
    }

    @Test func R20_stopOnALoopThatIsNotRunningDoesNothing() {
        expectSameTrace(["timedOut"]) { engine in
            engine.stop()
            engine.log(engine.run(timeout: 0.02))
        }
    }

    @Test func R20_R21_stopInsideTheInnermostOfThreeRunsEndsOnlyThatRun() {
        expectSameTrace(["third stopped", "second timedOut", "first stopped"]) { engine in
            let third = engine.addSource(order: 2) { engine in engine.stop() }
            let second = engine.addSource(order: 1) { engine in
                engine.signal(third)
                engine.log("third \(engine.run(timeout: 10))")
            }
            let first = engine.addSource(order: 0) { engine in
                engine.signal(second)
                engine.log("second \(engine.run(timeout: 0.02))")
                engine.stop()
            }
            engine.signal(first)
            engine.log("first \(engine.run(timeout: 10))")
        }
    }

    @Test func R17_aRunThatReturnsAfterASourceFiresOneVersion0Source() {
        let expected = ["fired 0", "handledSource", "fired 1", "handledSource", "fired 2", "handledSource", "timedOut"]
        expectSameTrace(expected) { engine in
            let sources = [2, 0, 1].map { order in
                engine.addSource(order: order) { engine in engine.log("fired \(order)") }
            }
            for s in sources { engine.signal(s) }
            for _ in 0..<4 { engine.log(engine.run(timeout: 0.02, returnAfterSourceHandled: true)) }
        }
    }

    @Test func R10_withoutReturningAfterASourceEverySignalledSourceFiresInOnePass() {
        expectSameTrace(["fired 0", "fired 1", "fired 2", "timedOut"]) { engine in
            let sources = [2, 0, 1].map { order in
                engine.addSource(order: order) { engine in engine.log("fired \(order)") }
            }
            for s in sources { engine.signal(s) }
            engine.log(engine.run(timeout: 0.02))
        }
    }

    @Test func R12_R15_aRunNestedInATimersHandlerPassesThatTimerOver() {
        expectSameTrace(["fired", "nested stopped", "outer timedOut"]) { engine in
            let stopper = engine.addSource(order: 0, mode: "parity-nested") { engine in engine.stop() }
            engine.addTimer(modes: ["default", "parity-nested"]) { engine in
                engine.log("fired")
                engine.signal(stopper)
                engine.log("nested \(engine.run(mode: "parity-nested", timeout: 10))")
            }
            engine.log("outer \(engine.run(timeout: 0.05))")
        }
    }

    @Test func R16_R21_aRunNestedInAnObserversHandlerDoesNotCallThatObserver() {
        let expected = ["observed entry", "nested stopped", "observed exit", "outer timedOut"]
        expectSameTrace(expected) { engine in
            let stopper = engine.addSource(order: 0, mode: "parity-nested") { engine in engine.stop() }
            var nestedOnce = false
            engine.addObserver(entryAndExit: true, modes: ["default", "parity-nested"]) { engine, activity in
                engine.log("observed \(activity)")
                guard activity == "entry", !nestedOnce else { return }
                nestedOnce = true
                engine.signal(stopper)
                engine.log("nested \(engine.run(mode: "parity-nested", timeout: 10))")
            }
            engine.log("outer \(engine.run(timeout: 0.05))")
        }
    }

    /// Runs `scenario` on each engine, each on a thread of its own, and
    /// expects both traces to be `expected`.
    private func expectSameTrace(_ expected: [String], sourceLocation: SourceLocation = #_sourceLocation,
                                 _ scenario: @escaping @Sendable (any ParityEngine) -> Void) {
        let cf = onThread("cf-parity") { () -> [String] in
            let engine = CFEngine()
            scenario(engine)
            return engine.trace
        }
        let ours = onThread("loop-parity") { () -> [String] in
            let engine = LoopEngine()
            scenario(engine)
            return engine.trace
        }
        #expect(cf == expected, "Core Foundation's trace", sourceLocation: sourceLocation)
        #expect(ours == cf, "LoopRuntime's trace against Core Foundation's", sourceLocation: sourceLocation)
    }
}

/// The run-loop calls the scenarios make, on the calling thread's loop of
/// one engine. Modes are named as strings, "default" the default mode,
/// which a far-off timer keeps from being empty.
private protocol ParityEngine: AnyObject {
    /// A version-0 source in `mode`, by order; returns its index.
    func addSource(order: Int, mode: String, _ perform: @escaping (any ParityEngine) -> Void) -> Int
    func signal(_ source: Int)
    /// A one-shot timer, due at once, in each of `modes`.
    func addTimer(modes: [String], _ fire: @escaping (any ParityEngine) -> Void)
    /// A repeating observer of runs' entries and exits, in each of
    /// `modes`; `observe` gets "entry" or "exit".
    func addObserver(entryAndExit: Bool, modes: [String], _ observe: @escaping (any ParityEngine, String) -> Void)
    func stop()
    /// Runs `mode`; returns the result's name (`Loop.RunResult`'s cases).
    func run(mode: String, timeout seconds: Double, returnAfterSourceHandled: Bool) -> String
    func log(_ line: String)
    var trace: [String] { get }
}

extension ParityEngine {
    func addSource(order: Int, _ perform: @escaping (any ParityEngine) -> Void) -> Int {
        addSource(order: order, mode: "default", perform)
    }

    func run(mode: String = "default", timeout seconds: Double) -> String {
        run(mode: mode, timeout: seconds, returnAfterSourceHandled: false)
    }

    func run(timeout seconds: Double, returnAfterSourceHandled: Bool) -> String {
        run(mode: "default", timeout: seconds, returnAfterSourceHandled: returnAfterSourceHandled)
    }
}

private final class LoopEngine: ParityEngine {
    private let loop = Loop.current
    private var sources: [LoopSource] = []
    private(set) var trace: [String] = []

    init() { loop.add(LoopTimer(after: .seconds(3600)) { _ in }, forMode: .default) }

    private static func mode(_ name: String) -> Loop.Mode { name == "default" ? .default : Loop.Mode(name) }

    func addSource(order: Int, mode: String, _ perform: @escaping (any ParityEngine) -> Void) -> Int {
        // The loop calls handlers only on this thread, the engine's own.
        nonisolated(unsafe) let perform = perform
        nonisolated(unsafe) unowned let engine = self
        let source = LoopSource(order: order) { perform(engine) }
        loop.add(source, forMode: Self.mode(mode))
        sources.append(source)
        return sources.count - 1
    }

    func addTimer(modes: [String], _ fire: @escaping (any ParityEngine) -> Void) {
        nonisolated(unsafe) let fire = fire
        nonisolated(unsafe) unowned let engine = self
        let timer = LoopTimer(after: .zero) { _ in fire(engine) }
        for m in modes { loop.add(timer, forMode: Self.mode(m)) }
    }

    func addObserver(entryAndExit: Bool, modes: [String], _ observe: @escaping (any ParityEngine, String) -> Void) {
        nonisolated(unsafe) let observe = observe
        nonisolated(unsafe) unowned let engine = self
        let observer = LoopObserver(activities: [.entry, .exit]) { _, activity in
            observe(engine, activity == .entry ? "entry" : "exit")
        }
        for m in modes { loop.add(observer, forMode: Self.mode(m)) }
    }

    func signal(_ source: Int) { sources[source].signal() }
    func stop() { loop.stop() }
    func log(_ line: String) { trace.append(line) }

    func run(mode: String, timeout seconds: Double, returnAfterSourceHandled: Bool) -> String {
        let timeout = Duration.nanoseconds(Int64(seconds * 1e9))
        return "\(loop.run(mode: Self.mode(mode), timeout: timeout, returnAfterSourceHandled: returnAfterSourceHandled))"
    }
}

private final class CFEngine: ParityEngine {
    /// What a CF source's context points at: the handler and its engine.
    private final class Perform {
        let body: (any ParityEngine) -> Void
        unowned let engine: CFEngine
        init(_ body: @escaping (any ParityEngine) -> Void, _ engine: CFEngine) {
            self.body = body
            self.engine = engine
        }
    }

    private let loop: CFRunLoop = CFRunLoopGetCurrent()
    private var sources: [CFRunLoopSource] = []
    private(set) var trace: [String] = []
    private let keepAlive: CFRunLoopTimer

    init() {
        keepAlive = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent() + 3600, 0, 0, 0) { _ in }
        CFRunLoopAddTimer(loop, keepAlive, kCFRunLoopDefaultMode)
    }

    deinit {
        CFRunLoopTimerInvalidate(keepAlive)
        for s in sources { CFRunLoopSourceInvalidate(s) }
    }

    private static func mode(_ name: String) -> CFRunLoopMode {
        name == "default" ? kCFRunLoopDefaultMode : CFStringCreateWithCString(nil, name, CFStringBuiltInEncodings.UTF8.rawValue)
    }

    func addSource(order: Int, mode: String, _ perform: @escaping (any ParityEngine) -> Void) -> Int {
        var context = CFRunLoopSourceContext()
        context.info = Unmanaged.passRetained(Perform(perform, self)).toOpaque()
        context.release = { info in Unmanaged<Perform>.fromOpaque(info!).release() }
        context.perform = { info in
            let p = Unmanaged<Perform>.fromOpaque(info!).takeUnretainedValue()
            p.body(p.engine)
        }
        let source = CFRunLoopSourceCreate(nil, CFIndex(order), &context)!
        CFRunLoopAddSource(loop, source, Self.mode(mode))
        sources.append(source)
        return sources.count - 1
    }

    func addTimer(modes: [String], _ fire: @escaping (any ParityEngine) -> Void) {
        let timer = CFRunLoopTimerCreateWithHandler(nil, CFAbsoluteTimeGetCurrent(), 0, 0, 0) { [unowned self] _ in
            fire(self)
        }
        for m in modes { CFRunLoopAddTimer(loop, timer, Self.mode(m)) }
    }

    func addObserver(entryAndExit: Bool, modes: [String], _ observe: @escaping (any ParityEngine, String) -> Void) {
        let activities = CFRunLoopActivity.entry.rawValue | CFRunLoopActivity.exit.rawValue
        let observer = CFRunLoopObserverCreateWithHandler(nil, activities, true, 0) { [unowned self] _, activity in
            observe(self, activity == .entry ? "entry" : "exit")
        }
        for m in modes { CFRunLoopAddObserver(loop, observer, Self.mode(m)) }
    }

    func signal(_ source: Int) { CFRunLoopSourceSignal(sources[source]) }
    func stop() { CFRunLoopStop(loop) }
    func log(_ line: String) { trace.append(line) }

    func run(mode: String, timeout seconds: Double, returnAfterSourceHandled: Bool) -> String {
        switch CFRunLoopRunInMode(Self.mode(mode), seconds, returnAfterSourceHandled) {
        case .finished: "finished"
        case .stopped: "stopped"
        case .timedOut: "timedOut"
        case .handledSource: "handledSource"
        default: "unknown"
        }
    }
}
