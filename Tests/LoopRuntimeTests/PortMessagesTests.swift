import Testing
@testable import LoopRuntime

/// `LoopPort.messages`: a port's messages as an `AsyncSequence`. Delivery
/// stays the port's (R9: on its loop's thread, in order; R5: held while the
/// loop does not run the port's mode); the sequence adds per-iteration
/// buffers with back-pressure into the port, and ends on cancellation or
/// invalidation. The reading tasks prefer a `LoopThread` of their own
/// (or the port's): the tests block their own threads while they wait, and
/// Swift Testing's cooperative pool is too small to run the readers too.
@Suite struct PortMessagesTests {
    private func ids(_ n: ClosedRange<Int32>) -> [Int32] { Array(n) }

    /// `await task.value`, bounded: a reader still running after `seconds`
    /// is cancelled (which ends its iteration) and an issue recorded.
    /// Whether the reader ended is learnt on a loop thread of its own, not
    /// by this test resuming: other suites' blocking tests may hold Swift's
    /// cooperative pool longer than the bound (seen under ThreadSanitizer).
    private func value<T: Sendable>(of task: Task<T, Never>, within seconds: Double = 30,
                                    sourceLocation: SourceLocation = #_sourceLocation) async -> T {
        let observer = LoopThread(name: "pm-observer")
        defer { shutDown(observer) }
        let done = Flag()
        Task(executorPreference: observer) {
            _ = await task.value
            done.open()
        }
        let watchdog = TestThread("pm-watchdog") { () -> Bool in
            if done.wait(seconds) { return false }
            task.cancel()
            return true
        }
        let result = await task.value
        if watchdog.join() == true {
            Issue.record("the reader did not finish within \(seconds) s; cancelled it", sourceLocation: sourceLocation)
        }
        return result
    }

    @Test func R9_messagesArriveInOrder() async {
        let worker = LoopThread(name: "pm-order")
        defer { shutDown(worker) }
        let port = LoopPort()
        worker.loop.add(port, forMode: .common)
        var iterator = port.messages.makeAsyncIterator()
        for i in Int32(1)...200 { port.send(id: i, payload: [UInt8(truncatingIfNeeded: i)]) }
        var got: [LoopMessage] = []
        while got.count < 200, let m = await iterator.next() { got.append(m) }
        #expect(got.map(\.id) == ids(1...200))
        #expect(got.allSatisfy { $0.payload == [UInt8(truncatingIfNeeded: $0.id)] })
        port.invalidate()
    }

    @Test func R9_forAwaitSeesEveryMessageAndTheHandlerStillGetsThem() async {
        let worker = LoopThread(name: "pm-forawait")
        defer { shutDown(worker) }
        let handled = Recorder<Int32>()
        let port = LoopPort { handled.append($0.id) }
        worker.loop.add(port, forMode: .common)
        let started = Flag()
        // The reader runs on the port's own loop thread, between deliveries.
        let reader = Task(executorPreference: worker) { () -> [Int32] in
            var got: [Int32] = []
            let messages = port.messages
            var iterator = messages.makeAsyncIterator()
            started.open()
            while let m = await iterator.next() {
                got.append(m.id)
                if m.id == 50 { break }
            }
            return got
        }
        #expect(started.wait())
        for i in Int32(1)...50 { port.send(id: i) }
        #expect(await value(of: reader) == ids(1...50))
        #expect(eventually { handled.all == ids(1...50) })
        // Leaving the loop detached the iteration.
        #expect(eventually { port.subscribers.attachedCount == 0 })
        port.invalidate()
    }

    @Test func R11_cancellationEndsTheIterationAndStopsDeliveryToIt() async {
        let worker = LoopThread(name: "pm-cancel")
        defer { shutDown(worker) }
        let handled = Counter()
        let port = LoopPort { _ in handled.increment() }
        worker.loop.add(port, forMode: .common)
        let readerThread = LoopThread(name: "pm-cancel-r")
        defer { shutDown(readerThread) }
        let got = Recorder<Int32>()
        let reader = Task(executorPreference: readerThread) { () -> String in
            for await m in port.messages {
                got.append(m.id)
            }
            return "ended"
        }
        #expect(eventually { port.subscribers.attachedCount == 1 })
        port.send(id: 1)
        #expect(eventually { got.count == 1 })
        // The reader now waits in next(); cancelling it ends the loop.
        reader.cancel()
        #expect(await value(of: reader) == "ended")
        #expect(port.subscribers.attachedCount == 0)
        // The port keeps working for its handler and for a new iteration.
        var again = port.messages.makeAsyncIterator()
        port.send(id: 2)
        #expect(await again.next()?.id == 2)
        #expect(eventually { handled.count == 2 })
        #expect(got.all == [1])
        #expect(port.isValid)
        port.invalidate()
    }

    @Test func cancellingBeforeTheFirstNextEndsAtOnce() async {
        let readerThread = LoopThread(name: "pm-precancel")
        defer { shutDown(readerThread) }
        let port = LoopPort()
        let reader = Task(executorPreference: readerThread) { () -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            var n = 0
            for await _ in port.messages { n += 1 }
            return n
        }
        #expect(await value(of: reader) == 0)
        #expect(port.subscribers.attachedCount == 0)
    }

    @Test func anIterationThatEndedReleasesThePort() async {
        let worker = LoopThread(name: "pm-release")
        defer { shutDown(worker) }
        let readerThread = LoopThread(name: "pm-release-r")
        defer { shutDown(readerThread) }
        let weak = WeakRef<LoopPort>()
        let reader: Task<Int, Never>
        do {
            let port = LoopPort()
            weak.set(port)
            worker.loop.add(port, forMode: .common)
            reader = Task(executorPreference: readerThread) {
                var n = 0
                for await _ in port.messages { n += 1 }
                return n
            }
            #expect(eventually { port.subscribers.attachedCount == 1 })
            port.send(id: 1)
            #expect(eventually { port.pendingCount == 0 })
            worker.loop.remove(port, forMode: .common)
        }
        reader.cancel()
        #expect(await value(of: reader) <= 1)
        #expect(eventually { weak.object == nil })
    }

    /// The documented policy: an iteration buffers at most `bufferLimit`
    /// messages; beyond that the port holds them (its handler too) and
    /// nothing is dropped; taking one lets the next one through.
    @Test func R5_aFullBufferHoldsMessagesInThePortAndLosesNone() async {
        let worker = LoopThread(name: "pm-pressure")
        defer { shutDown(worker) }
        let handled = Recorder<Int32>()
        let port = LoopPort { handled.append($0.id) }
        worker.loop.add(port, forMode: .common)
        var iterator = port.messages(bufferLimit: 4).makeAsyncIterator()
        for i in Int32(1)...10 { port.send(id: i) }
        // Four went to the buffer (and the handler); six wait in the port.
        #expect(eventually { port.pendingCount == 6 && handled.count == 4 })
        #expect(roundTrip(worker))
        #expect(port.pendingCount == 6)
        #expect(handled.all == ids(1...4))
        // Taking one lets exactly one more through.
        #expect(await iterator.next()?.id == 1)
        #expect(eventually { port.pendingCount == 5 && handled.count == 5 })
        var got: [Int32] = [1]
        while got.count < 10, let m = await iterator.next() { got.append(m.id) }
        #expect(got == ids(1...10))
        #expect(eventually { handled.all == ids(1...10) })
        #expect(port.pendingCount == 0)
        port.invalidate()
    }

    @Test func R5_aStalledPortResumesWhenTheFullIterationIsCancelled() async {
        let worker = LoopThread(name: "pm-unstall")
        defer { shutDown(worker) }
        let handled = Recorder<Int32>()
        let port = LoopPort { handled.append($0.id) }
        worker.loop.add(port, forMode: .common)
        let readerThread = LoopThread(name: "pm-unstall-r")
        defer { shutDown(readerThread) }
        let filled = Flag()
        let slow = Task(executorPreference: readerThread) { () -> Int in
            var iterator = port.messages(bufferLimit: 2).makeAsyncIterator()
            filled.open()
            // Never takes a message until cancelled: its buffer fills.
            try? await Task.sleep(for: .seconds(60))
            var n = 0
            while await iterator.next() != nil { n += 1 }
            return n
        }
        #expect(filled.wait())
        for i in Int32(1)...5 { port.send(id: i) }
        #expect(eventually { port.pendingCount == 3 && handled.count == 2 })
        slow.cancel()
        #expect(await value(of: slow) == 0)
        #expect(eventually { handled.all == ids(1...5) })
        port.invalidate()
    }

    @Test func R11_invalidatingThePortEndsTheIterationAfterItsBuffer() async {
        let worker = LoopThread(name: "pm-invalidate")
        defer { shutDown(worker) }
        let port = LoopPort()
        worker.loop.add(port, forMode: .common)
        var iterator = port.messages.makeAsyncIterator()
        for i in Int32(1)...3 { port.send(id: i) }
        #expect(eventually { port.pendingCount == 0 })
        #expect(roundTrip(worker))
        port.invalidate()
        var got: [Int32] = []
        while let m = await iterator.next() { got.append(m.id) }
        #expect(got == [1, 2, 3])
        #expect(await iterator.next() == nil)
        // A new iteration of an invalidated port ends at once.
        var late = port.messages.makeAsyncIterator()
        #expect(await late.next() == nil)
    }

    @Test func R5_messagesWaitWhileTheLoopRunsAnotherMode() async {
        let worker = LoopThread(name: "pm-mode", mode: "pm.private")
        defer { shutDown(worker) }
        let port = LoopPort()
        worker.loop.add(port, forMode: .default)
        var iterator = port.messages.makeAsyncIterator()
        port.send(id: 7)
        #expect(roundTrip(worker, modes: ["pm.private"]))
        #expect(port.pendingCount == 1)
        worker.setRunMode(.default)
        #expect(await iterator.next()?.id == 7)
        port.invalidate()
    }
}
