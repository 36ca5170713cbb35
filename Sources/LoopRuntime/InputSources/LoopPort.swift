import LoopPlatform

/// One message carried by a `LoopPort`: an id and a byte payload.
public struct LoopMessage: Sendable, Equatable {
    /// What the message means, chosen by the sender (a Mach message id's role).
    public var id: Int32
    /// The message body.
    public var payload: [UInt8]

    /// A message with `id` and `payload` (empty by default).
    public init(id: Int32, payload: [UInt8] = []) {
        self.id = id
        self.payload = payload
    }
}

/// A version-1 source carrying messages (the Linux stand-in for a Mach port,
/// R9). `send` from any thread queues a message and, if the queue was
/// empty, makes the port's eventfd readable, which wakes a loop sleeping in
/// one of the port's modes by itself. Messages are delivered in order on the
/// loop's thread; while no run of the port's modes is in progress they wait
/// (R5). A loop keeps a port added to it alive until it is removed from its
/// last mode or invalidated (so do the other version-1 sources).
public final class LoopPort: @unchecked Sendable {
    private let eventFD: EventFD
    let core: KernelSource
    private let lock = Lock()
    private var queue: [LoopMessage] = []  // guarded by lock
    private var head = 0                   // guarded by lock
    /// The iterations of `messages` (LoopPort+AsyncSequence.swift).
    let subscribers: PortSubscribers

    /// A port that calls `handler` on its loop's thread for each message.
    public init(order: Int = 0, _ handler: @escaping @Sendable (LoopMessage) -> Void) {
        let fd: EventFD
        do { fd = try EventFD() } catch { fatalError("cannot create a LoopPort: \(error)") }
        eventFD = fd
        subscribers = PortSubscribers(wake: { fd.signal() })
        let owner = WeakOwner<LoopPort>()
        core = KernelSource(fd: fd.fd, interest: .readable, order: order,
                            label: { "port fd = \(fd.fd)" },
                            handler: { _, single in owner.value?.deliver(single: single, to: handler) })
        owner.value = self
        core.adopt(owner: self)
    }

    deinit {
        core.invalidate()
    }

    /// Queues a message; wakes the port's loop. Any thread. Returns false if
    /// the port was invalidated.
    @discardableResult
    public func send(id: Int32, payload: [UInt8] = []) -> Bool {
        send(LoopMessage(id: id, payload: payload))
    }

    /// Queues a message; wakes the port's loop. Any thread.
    @discardableResult
    public func send(_ message: LoopMessage) -> Bool {
        guard core.isValid else { return false }
        let wasEmpty = lock.withLock { () -> Bool in
            let empty = head == queue.count
            queue.append(message)
            return empty
        }
        if wasEmpty { eventFD.signal() }
        return true
    }

    /// Messages sent and not yet handled.
    public var pendingCount: Int { lock.withLock { queue.count - head } }

    /// False once invalidated.
    public var isValid: Bool { core.isValid }

    /// Removes the port from every loop; queued messages are dropped and
    /// later sends are refused.
    public func invalidate() {
        core.invalidate()
        lock.withLock {
            queue.removeAll()
            head = 0
        }
        subscribers.invalidate()
    }

    /// Hands over the queued messages (one, if the run returns after one
    /// source). Leaves the eventfd readable while messages remain, so a
    /// message never waits for another send.
    private func deliver(single: Bool, to handler: @Sendable (LoopMessage) -> Void) {
        eventFD.drain()
        // At most as many as the iterations of `messages` have room for.
        let (batch, stalled) = subscribers.deliver(limit: single ? 1 : .max, take: { limit in
            lock.withLock {
                let end = head + min(limit, queue.count - head)
                let taken = queue[head..<end]
                head = end
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                }
                return taken
            }
        }, leftOver: { pendingCount > 0 })
        if single, !stalled, pendingCount > 0 { eventFD.signal() }
        for m in batch where core.isValid { handler(m) }
    }
}

extension Loop {
    /// Adds a port to `mode` (or every common mode). Adding it twice has no effect.
    public func add(_ port: LoopPort, forMode mode: Mode) { add(port.core, forMode: mode) }
    /// Removes a port from `mode`.
    public func remove(_ port: LoopPort, forMode mode: Mode) { remove(port.core, forMode: mode) }
    /// Whether the port is in `mode`.
    public func contains(_ port: LoopPort, inMode mode: Mode) -> Bool { contains(port.core, inMode: mode) }
}
