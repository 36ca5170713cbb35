import Testing
@testable import LoopRuntime

/// The examples of Apple's Threading Programming Guide, written against
/// LoopRuntime: listings
/// 3-1 (observer and repeating timer), 3-2 (the skeleton thread loop), 3-3 to
/// 3-9 (a custom input source with a command buffer), and a resident thread
/// kept alive by a port it never reads (R26).
@Suite struct SeedExampleTests {
    // MARK: listings 3-3 to 3-9: a custom input source

    @Test func listings3_3to3_9_aCustomInputSourceWithACommandBuffer() {
        let mainThread = LoopThread(name: "seed-main")  // the application's main thread
        defer { shutDown(mainThread) }
        let delegate = AppDelegate(mainThread: mainThread)
        let worker = TestThread("seed-worker") { () -> [Loop.RunResult] in
            // Listing 3-7: the worker creates the source and installs it on
            // its own loop, which calls the schedule routine (3-4).
            let source = CommandSource(delegate: delegate)
            source.addToCurrentRunLoop()
            // Then it runs its loop, returning after each source (listing 3-2).
            var results: [Loop.RunResult] = []
            repeat {
                results.append(Loop.current.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true))
            } while results.last != .finished && results.last != .stopped && results.count < 50
            return results
        }

        // Listing 3-8: the schedule routine registered the source with the
        // delegate, on the main thread.
        #expect(eventually { delegate.sourcesToPing.count == 1 })
        guard let context = delegate.sourcesToPing.first else { return }
        #expect(context.loop !== mainThread.loop)

        // Listing 3-9: a client posts commands, signals the source and wakes the loop.
        context.source.addCommand(1, data: "open")
        context.source.addCommand(2, data: "read")
        context.source.fireAllCommandsOnRunLoop(context.loop)
        #expect(eventually { context.source.batches.count == 1 })
        context.source.addCommand(3, data: "close")
        context.source.fireAllCommandsOnRunLoop(context.loop)
        #expect(eventually { context.source.batches.count == 2 })
        // Listing 3-5: the perform routine drained the buffer, on the worker's thread.
        #expect(context.source.batches.all == ["1 open, 2 read (worker)", "3 close (worker)"])

        // Listing 3-6: invalidating the source runs the cancel routine, which
        // unregisters it from the delegate (waiting for the main thread).
        // (bounded: the cancel routine blocks until the main thread ran it)
        #expect(bounded { context.source.invalidate() } != nil)
        #expect(delegate.sourcesToPing.isEmpty)
        // Its loop has nothing left; woken, the worker's run finishes.
        context.loop.wakeUp()
        let results = worker.join() ?? []
        #expect(results.filter { $0 != .timedOut } == [.handledSource, .handledSource, .finished])
    }

    // MARK: listing 3-1: an observer and a repeating timer

    @Test func listing3_1_aThreadWithAnObserverAndARepeatingTimer() {
        let clock = ManualClock()
        let activities = Recorder<String>()
        let fires = Counter()
        let loopSlot = Slot<Loop>()
        let worker = TestThread("seed-3-1") { () -> [Loop.RunResult] in
            let myRunLoop = Loop.current
            useManualClock(clock, on: myRunLoop)
            // An observer of every activity, repeating, order 0.
            let observer = LoopObserver(activities: .all, repeats: true, order: 0) { _, activity in
                activities.append(activityName(activity))
            }
            myRunLoop.add(observer, forMode: .default)
            // A timer every 0.1 s.
            myRunLoop.add(LoopTimer(after: .milliseconds(100), interval: .milliseconds(100)) { _ in
                fires.increment()
            }, forMode: .default)
            loopSlot.set(myRunLoop)
            // Run the loop 10 times, one second each, to let the timer fire.
            var results: [Loop.RunResult] = []
            for _ in 0..<10 { results.append(myRunLoop.run(mode: .default, timeout: .seconds(1))) }
            return results
        }
        let loop = loopSlot.wait()!
        // Ten seconds of the clock, a tenth at a time, each once the loop sleeps.
        for i in 1...100 {
            guard waitUntilSleeping(loop) else { break }
            clock.advance(by: .milliseconds(100))
            guard eventually(10, { fires.count == i }) else { break }
        }
        let results = worker.join()
        #expect(results == Array(repeating: .timedOut, count: 10))
        #expect(fires.count == 100)
        let seen = activities.all
        #expect(seen.filter { $0 == "entry" }.count == 10)
        #expect(seen.filter { $0 == "exit" }.count == 10)
        #expect(seen.filter { $0 == "beforeWaiting" }.count == seen.filter { $0 == "afterWaiting" }.count)
        #expect(Array(seen.prefix(5)) == ["entry", "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting"])
    }

    // MARK: listing 3-2: the skeleton thread loop

    @Test func listing3_2_theSkeletonLoopHandlesEachSourceAndEndsWhenStopped() {
        let handled = Counter()
        let source = LoopSource { handled.increment() }
        let port = LoopPort { _ in handled.increment() }
        let (worker, loop) = skeletonThread(source: source, port: port)
        #expect(waitUntilSleeping(loop))
        port.send(id: 1)
        #expect(eventually { handled.count == 1 })
        source.signal()
        loop.wakeUp()
        #expect(eventually { handled.count == 2 })
        port.send(id: 2)
        port.send(id: 3)
        #expect(eventually { handled.count == 4 })
        loop.stop()
        let results = worker.join() ?? []
        #expect(results.filter { $0 != .timedOut } == [.handledSource, .handledSource, .handledSource, .handledSource, .stopped])
    }

    @Test func listing3_2_theSkeletonLoopEndsWhenItsSourcesAreGone() {
        let handled = Counter()
        let source = LoopSource { handled.increment() }
        let port = LoopPort { _ in handled.increment() }
        let (worker, loop) = skeletonThread(source: source, port: port)
        #expect(waitUntilSleeping(loop))
        port.send(id: 1)
        #expect(eventually { handled.count == 1 })
        source.invalidate()
        port.invalidate()
        loop.wakeUp()
        let results = worker.join() ?? []
        #expect(results.filter { $0 != .timedOut } == [.handledSource, .finished])
    }

    /// Listing 3-2's `skeletonThreadMain`, with a source and a port installed.
    private func skeletonThread(source: LoopSource, port: LoopPort) -> (TestThread<[Loop.RunResult]>, Loop) {
        let loopSlot = Slot<Loop>()
        let thread = TestThread("seed-3-2") { () -> [Loop.RunResult] in
            let loop = Loop.current
            // Add your sources or timers to the run loop and do any other setup.
            loop.add(source, forMode: .default)
            loop.add(port, forMode: .default)
            loopSlot.set(loop)
            var done = false
            var results: [Loop.RunResult] = []
            repeat {
                // Start the run loop but return after each source is handled.
                let result = loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
                results.append(result)
                // If a source explicitly stopped the run loop, or if there are
                // no sources or timers, go ahead and exit.
                if result == .stopped || result == .finished { done = true }
                // Check for any other exit conditions here (a bound, for the test).
                if results.count >= 50 { done = true }
            } while !done
            return results
        }
        return (thread, loopSlot.wait()!)
    }

    // MARK: a resident thread

    @Test func seed003_aResidentThreadStartedUsedAndStopped() {
        let log = Recorder<String>()
        let stopped = Flag()
        let loopRef = WeakRef<Loop>()
        let thread = TestThread("HTThread") { () -> Int in
            log.append("begin")
            // ① get (create) the thread's loop; ② keep it alive with a port
            // (held here: a loop does not keep a LoopPort alive, see below).
            let loop = Loop.current
            let port = LoopPort { _ in }
            loop.add(port, forMode: .default)
            loopRef.set(loop)
            // ③ run it until the stop flag is set.
            var runs = 0
            while !stopped.isOpen && runs < 1000 {
                loop.run(mode: .default, timeout: .seconds(10))
                runs += 1
            }
            log.append("end")
            withExtendedLifetime(port) {}
            return runs
        }
        #expect(eventually { loopRef.object != nil })
        do {
            guard let loop = loopRef.object else { return }
            // touchesBegan: perform `test` on the thread, without waiting.
            loop.perform { log.append("test on thread: \(Loop.current === loop)") }
            // dealloc: perform `stopThread` on the thread and wait for it.
            let done = Flag()
            loop.perform {
                stopped.open()
                Loop.current.stop()
                log.append("stopThread")
                done.open()
            }
            #expect(done.wait())
        }
        let runs = thread.join()
        #expect(runs == 1, "one run, ended by the stop")
        #expect(log.all == ["begin", "test on thread: true", "stopThread", "end"])
        #expect(eventually { loopRef.object == nil }, "the thread's loop was torn down with it")
    }

    /// The Objective-C pattern writes `[runLoop addPort:[[NSPort alloc] init] forMode:...]`
    /// and keeps no reference: the loop owns the port. Were the port freed
    /// (and so invalidated) at once, the mode would be empty and the
    /// resident loop would spin on `.finished`.
    @Test func seed003_aPortAddedWithoutKeepingAReferenceKeepsTheLoopAlive() {
        let result = onThread { () -> Loop.RunResult in
            let loop = Loop.current
            loop.add(LoopPort { _ in }, forMode: .default)
            return loop.run(mode: .default, timeout: .milliseconds(20))
        }
        #expect(result == .timedOut, "the port keeps the mode from being empty")
    }
}

// MARK: listing 3-3's objects

/// Listing 3-3's `RunLoopContext`: a source and the loop it was installed on.
struct RunLoopContext: Sendable {
    let source: CommandSource
    let loop: Loop
}

/// The application delegate of listing 3-8: keeps the sources to ping. Its
/// list is changed only on the main thread (through perform requests).
final class AppDelegate: Sendable {
    let mainThread: LoopThread
    private let list = Guarded<[RunLoopContext]>([])

    init(mainThread: LoopThread) { self.mainThread = mainThread }

    var sourcesToPing: [RunLoopContext] { list.withLock { $0 } }

    func registerSource(_ context: RunLoopContext) {
        precondition(mainThread.loop.isCurrentThread, "the delegate's list lives on the main thread")
        list.withLock { $0.append(context) }
    }

    func removeSource(_ context: RunLoopContext) {
        precondition(mainThread.loop.isCurrentThread, "the delegate's list lives on the main thread")
        list.withLock { contexts in
            if let i = contexts.firstIndex(where: { $0.source === context.source && $0.loop === context.loop }) {
                contexts.remove(at: i)
            }
        }
    }
}

/// Listing 3-3's `RunLoopSource`: a custom input source with a command
/// buffer that other threads fill.
final class CommandSource: Sendable {
    /// The commands, shared by the clients and the source's thread: synchronised.
    private let commands = Guarded<[(Int, String)]>([])
    /// What each firing handled, for the test.
    let batches = Recorder<String>()
    private let runLoopSource: LoopSource
    /// The loop the source was installed on.
    private let scheduledOn: Slot<Loop>

    /// Listing 3-7's `init`: the source's callbacks reach this object.
    init(delegate: AppDelegate) {
        let me = WeakRef<CommandSource>()
        let scheduledOn = Slot<Loop>()
        self.scheduledOn = scheduledOn
        runLoopSource = LoopSource(
            order: 0,
            schedule: { loop, _ in
                // Listing 3-4: register with the delegate, on the main thread, without waiting.
                scheduledOn.set(loop)
                guard let obj = me.object else { return }
                let context = RunLoopContext(source: obj, loop: loop)
                delegate.mainThread.perform(waitUntilDone: false) { delegate.registerSource(context) }
            },
            cancel: { loop, _ in
                // Listing 3-6: unregister, waiting for the main thread.
                guard let obj = me.object else { return }
                let context = RunLoopContext(source: obj, loop: loop)
                delegate.mainThread.perform(waitUntilDone: true) { delegate.removeSource(context) }
            },
            perform: {
                // Listing 3-5: hand the work to `sourceFired`.
                me.object?.sourceFired()
            })
        me.set(self)
    }

    /// Listing 3-7's `addToCurrentRunLoop`.
    func addToCurrentRunLoop() {
        Loop.current.add(runLoopSource, forMode: .default)
    }

    func invalidate() { runLoopSource.invalidate() }

    /// Processes every command in the buffer.
    func sourceFired() {
        let pending = commands.withLock { c -> [(Int, String)] in
            defer { c.removeAll() }
            return c
        }
        let thread = scheduledOn.value?.isCurrentThread == true ? "worker" : "elsewhere"
        batches.append(pending.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + " (\(thread))")
    }

    /// The client interface: queue a command.
    func addCommand(_ command: Int, data: String) {
        commands.withLock { $0.append((command, data)) }
    }

    /// Listing 3-9: signal the source and wake its loop.
    func fireAllCommandsOnRunLoop(_ loop: Loop) {
        runLoopSource.signal()
        loop.wakeUp()
    }
}
