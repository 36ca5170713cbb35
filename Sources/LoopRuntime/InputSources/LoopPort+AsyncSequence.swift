import LoopPlatform
import Synchronization

extension LoopPort {
    /// A port with no handler of its own, for reading its messages with
    /// `messages`. Add it to a loop and run the loop as for any port.
    public convenience init(order: Int = 0) {
        self.init(order: order) { _ in }
    }

    /// The port's messages as an `AsyncSequence`, with a buffer of
    /// `defaultBufferLimit` messages per iteration. See `Messages`.
    public var messages: Messages { Messages(port: self, bufferLimit: LoopPort.defaultBufferLimit) }

    /// The port's messages as an `AsyncSequence` whose iterations buffer at
    /// most `bufferLimit` (at least 1) messages each. See `Messages`.
    public func messages(bufferLimit: Int) -> Messages {
        precondition(bufferLimit >= 1, "a port's message buffer holds at least one message")
        return Messages(port: self, bufferLimit: bufferLimit)
    }

    /// How many messages an iteration of `messages` buffers: 64.
    public static let defaultBufferLimit = 64

    /// A port's messages for `for await`:
    ///
    /// ```swift
    /// let port = LoopPort()
    /// worker.loop.add(port, forMode: .common)
    /// for await message in port.messages { … }
    /// ```
    ///
    /// **Delivery.** The sequence neither adds the port to a loop nor runs
    /// one: messages are delivered as always, on the loop's thread while it
    /// runs in one of the port's modes (R9; they wait while it does not,
    /// R5), and each delivered message goes, in order, to the port's handler
    /// and to every iteration in progress (each iteration gets every
    /// message delivered after it began: a broadcast). The iterating task
    /// runs wherever its executor puts it; the loop thread only hands the
    /// message over and never waits for the task.
    ///
    /// **Back-pressure: nothing is dropped.** Each iteration buffers at most
    /// `bufferLimit` messages that its task has not taken yet. While some
    /// iteration's buffer is full, the port delivers nothing: messages stay
    /// queued in the port (`pendingCount` grows; `send` never blocks and is
    /// never refused for it), exactly as while the loop does not run the
    /// port's mode, and delivery resumes, in order, once the task takes a
    /// message. So a slow iteration holds back the port's handler and its
    /// other iterations too, and an iteration that stops calling `next()`
    /// without ending stalls the port (end it: break, or cancel the task).
    ///
    /// **The end.** An iteration ends (`next()` returns nil) when its task
    /// is cancelled, at once, discarding what it had buffered, or when the
    /// port is invalidated, after the messages already in its buffer. Either
    /// way, and when the loop is left by `break` or the iterator is
    /// dropped, the iteration detaches from the port: it holds back nothing
    /// any more, and the port keeps delivering to its handler and other
    /// iterations. The iterator keeps the port alive while it exists; once
    /// nothing else holds the port (a loop holds a port that is in one of
    /// its modes), it is released.
    public struct Messages: AsyncSequence, Sendable {
        /// Each element is one message.
        public typealias Element = LoopMessage
        /// Iterating never throws.
        public typealias Failure = Never

        /// The port whose messages these are.
        public let port: LoopPort
        /// How many messages an iteration buffers at most.
        public let bufferLimit: Int

        /// Starts an iteration: from now on it gets every message the port delivers.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(port: port, lease: port.subscribers.subscribe(limit: bufferLimit))
        }

        /// One iteration over a port's messages.
        public struct AsyncIterator: AsyncIteratorProtocol {
            /// Each element is one message.
            public typealias Element = LoopMessage
            /// Iterating never throws.
            public typealias Failure = Never

            private let port: LoopPort
            private var lease: PortSubscribers.Lease?

            init(port: LoopPort, lease: PortSubscribers.Lease) {
                self.port = port
                self.lease = lease
            }

            /// The next message, waiting for it; nil once the task is
            /// cancelled or the port invalidated (then always nil).
            public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> LoopMessage? {
                guard let lease else { return nil }
                let subscription = lease.subscription
                let hub = port.subscribers
                let message = await withTaskCancellationHandler {
                    await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<LoopMessage?, Never>) in
                        hub.take(for: subscription, continuation)
                    }
                } onCancel: {
                    hub.cancel(subscription)
                }
                if message == nil {
                    hub.detach(subscription)
                    self.lease = nil
                }
                return message
            }

            /// The next message, waiting for it; nil once the task is
            /// cancelled or the port invalidated (then always nil).
            public mutating func next() async -> LoopMessage? {
                await next(isolation: nil)
            }
        }
    }
}

/// The iterations of a port's `messages`: their buffers, and whether the
/// port holds back delivery because one of them is full.
final class PortSubscribers: Sendable {
    /// One iteration's state. Every field is guarded by the owner's lock.
    final class Subscription: @unchecked Sendable {
        let limit: Int
        var buffer: [LoopMessage] = []
        var head = 0
        var waiter: CheckedContinuation<LoopMessage?, Never>?
        /// No more messages come: the port was invalidated.
        var finished = false
        /// Cancelled or detached: ends at once, buffer discarded.
        var ended = false

        init(limit: Int) { self.limit = limit }

        var buffered: Int { buffer.count - head }

        func popLocked() -> LoopMessage {
            let m = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            }
            return m
        }
    }

    /// Held by an iterator; detaches its subscription when the iterator goes.
    final class Lease: Sendable {
        let subscription: Subscription
        private let owner: PortSubscribers

        init(_ subscription: Subscription, owner: PortSubscribers) {
            self.subscription = subscription
            self.owner = owner
        }

        deinit { owner.detach(subscription) }
    }

    private struct State {
        var subscriptions: [Subscription] = []
        /// Delivery stopped with messages left in the port because a buffer
        /// was full; whoever makes room wakes the port.
        var stalled = false
        var invalidated = false
    }

    private let state = Locked(State())
    /// `state.subscriptions.count`, stored under the lock, read without it
    /// so a port nobody iterates delivers without taking this lock.
    private let count = Atomic<Int>(0)
    /// Makes the port's descriptor readable, so its loop delivers again.
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    /// How many iterations are attached. For tests.
    var attachedCount: Int { count.load(ordering: .relaxed) }

    func subscribe(limit: Int) -> Lease {
        let subscription = Subscription(limit: limit)
        state.withLock { state in
            if state.invalidated {
                subscription.finished = true
            } else {
                state.subscriptions.append(subscription)
                count.store(state.subscriptions.count, ordering: .relaxed)
            }
        }
        return Lease(subscription, owner: self)
    }

    /// Takes up to `limit` messages with `take` and hands them to every
    /// subscription; returns them for the port's handler. With no
    /// subscription this is `take(limit)`. Messages are taken only as far
    /// as every buffer has room; `stalled` when that left messages in the
    /// port (`leftOver`), which then must not wake itself: the iteration
    /// that makes room does. The port's loop thread, from `LoopPort.deliver`.
    func deliver(limit: Int, take: (Int) -> ArraySlice<LoopMessage>,
                 leftOver: () -> Bool) -> (batch: ArraySlice<LoopMessage>, stalled: Bool) {
        // An iteration that begins meanwhile gets the messages after these.
        if count.load(ordering: .relaxed) == 0 { return (take(limit), false) }
        var resumes: [(CheckedContinuation<LoopMessage?, Never>, LoopMessage)] = []
        let (batch, stalled) = state.withLock { state -> (ArraySlice<LoopMessage>, Bool) in
            guard !state.subscriptions.isEmpty else { return (take(limit), false) }
            var room = limit
            for s in state.subscriptions { room = min(room, s.limit - s.buffered) }
            let batch = room > 0 ? take(room) : []
            if room < limit, leftOver() { state.stalled = true }
            guard !batch.isEmpty else { return (batch, state.stalled) }
            for s in state.subscriptions {
                var rest = batch[...]
                if let waiter = s.waiter {
                    s.waiter = nil
                    resumes.append((waiter, rest.removeFirst()))
                }
                s.buffer.append(contentsOf: rest)
            }
            return (batch, state.stalled)
        }
        for (waiter, message) in resumes { waiter.resume(returning: message) }
        return (batch, stalled)
    }

    /// Resumes `continuation` with the subscription's next message at once,
    /// or with nil if it has ended, or parks it until a message comes.
    func take(for subscription: Subscription, _ continuation: CheckedContinuation<LoopMessage?, Never>) {
        var wakePort = false
        let answer = state.withLock { state -> LoopMessage?? in
            if subscription.ended { return .some(nil) }
            if subscription.buffered > 0 {
                let m = subscription.popLocked()
                if state.stalled {
                    state.stalled = false
                    wakePort = true
                }
                return .some(m)
            }
            if subscription.finished { return .some(nil) }
            subscription.waiter = continuation
            return .none
        }
        if wakePort { wake() }
        if let answer { continuation.resume(returning: answer) }
    }

    /// Ends the subscription at once (its task was cancelled).
    func cancel(_ subscription: Subscription) { end(subscription) }

    /// Removes the subscription: it no longer holds the port back.
    func detach(_ subscription: Subscription) { end(subscription) }

    private func end(_ subscription: Subscription) {
        var wakePort = false
        let waiter = state.withLock { state -> CheckedContinuation<LoopMessage?, Never>? in
            subscription.ended = true
            subscription.buffer.removeAll()
            subscription.head = 0
            state.subscriptions.removeAll { $0 === subscription }
            count.store(state.subscriptions.count, ordering: .relaxed)
            if state.stalled {
                state.stalled = false
                wakePort = true
            }
            defer { subscription.waiter = nil }
            return subscription.waiter
        }
        if wakePort { wake() }
        waiter?.resume(returning: nil)
    }

    /// The port was invalidated: every subscription ends after its buffer.
    func invalidate() {
        let waiters = state.withLock { state -> [CheckedContinuation<LoopMessage?, Never>] in
            state.invalidated = true
            state.stalled = false
            var waiters: [CheckedContinuation<LoopMessage?, Never>] = []
            for s in state.subscriptions {
                s.finished = true
                if let w = s.waiter {
                    waiters.append(w)
                    s.waiter = nil
                }
            }
            state.subscriptions.removeAll()
            count.store(0, ordering: .relaxed)
            return waiters
        }
        for w in waiters { w.resume(returning: nil) }
    }
}
