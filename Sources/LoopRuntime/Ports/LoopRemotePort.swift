import LoopPlatform
import Synchronization

/// A port registered by name somewhere on the machine, as seen by a sender:
/// CFMessagePortCreateRemote's result (Apple's Threading Programming Guide, listings 3-18 and 3-19).
///
/// ```swift
/// let main = try LoopRemotePort.lookup(name: "com.example.main")
/// try main.send(id: 100, payload: Array(myName.utf8), timeout: .milliseconds(100))
/// let reply = try main.sendRequest(id: 1, payload: [], sendTimeout: .seconds(1),
///                                  receiveTimeout: .seconds(5))
/// ```
///
/// Safe from any thread, concurrently: each operation borrows its own
/// socket, connected to the port and bound to a private autobound name that
/// replies come back to. Waiting (for room in a full queue, or for a reply)
/// blocks the calling thread in `poll` with the timeout; it never spins.
/// Once the port is found gone, this value stays invalid; look the name up
/// again to reach a port registered under it since.
public final class LoopRemotePort: @unchecked Sendable {
    /// The name it was looked up by.
    public let name: String
    private let address: UnixAddress
    /// The port, when it lives in this process: how `sendRequest` spots a
    /// wait that its own thread would have to answer.
    private let localPort: WeakOwner<LoopMessagePort>
    private let lock = Lock()
    private var idle: [PortChannel] = []  // guarded by lock: connected, not in use
    private var valid = true          // guarded by lock

    /// Requests on one channel are told apart by this process-wide counter.
    private static let sequence = Atomic<UInt64>(1)
    /// Idle channels kept for reuse; more are made while more threads send at once.
    private static let keptChannels = 4

    private init(name: String, address: UnixAddress, first: PortChannel) {
        self.name = name
        self.address = address
        localPort = WeakOwner()
        localPort.value = PortDirectory.shared.localPort(named: name)
        idle = [first]
    }

    /// Finds the port registered under `name`, in this process or another
    /// on the machine (CFMessagePortCreateRemote).
    /// - Throws: `.notFound` if no port is registered under it, `.invalidName`.
    public static func lookup(name: String) throws(LoopPortError) -> LoopRemotePort {
        let address = try PortDirectory.address(for: name)
        do {
            return LoopRemotePort(name: name, address: address, first: try PortChannel(connectedTo: address))
        } catch .invalid {
            throw .notFound
        }
    }

    /// False once this remote port was invalidated or an operation found the
    /// port gone. True does not promise the port is still there.
    public var isValid: Bool { lock.withLock { valid } }

    /// Stops using the port: later operations throw `.invalid`.
    public func invalidate() { markInvalid() }

    /// Sends a one-way message (no reply). Returns once the message is in
    /// the port's queue; when the queue is full, waits for room up to
    /// `timeout` (`.zero`: do not wait). Sending to a port of the calling
    /// thread's own loop is fine, but if its queue is full only the timeout
    /// can end the wait.
    /// - Throws: `.tooLarge`, `.sendTimedOut`, `.invalid`, `.system`.
    public func send(id: Int32, payload: [UInt8] = [], timeout: Duration = .zero) throws(LoopPortError) {
        guard payload.count <= PortWire.maximumPayloadSize else { throw .tooLarge }
        let datagram = PortWire.encode(.init(kind: .oneWay, sequence: 0, id: id, payloadLength: payload.count),
                                       payload: payload)
        let channel = try checkOut()
        do {
            try channel.send(datagram, deadline: monotonicDeadline(after: timeout))
        } catch {
            finish(channel, after: error)
            throw error
        }
        checkIn(channel)
    }

    /// Sends a request and waits for its reply (CFMessagePortSendRequest):
    /// the send may wait up to `sendTimeout` for room in the port's queue,
    /// then the reply may take up to `receiveTimeout`. The handler's nil
    /// reply arrives as an empty array.
    ///
    /// Not from the thread whose loop holds the port: that loop cannot run
    /// the handler while its thread waits here, so this throws
    /// `.wouldDeadlock` at once (detected for ports of this process).
    /// - Throws: `.tooLarge` (the payload, or the handler's reply),
    ///   `.sendTimedOut`, `.receiveTimedOut`, `.invalid` (the port is gone,
    ///   or was invalidated with this request queued), `.wouldDeadlock`, `.system`.
    public func sendRequest(id: Int32, payload: [UInt8] = [], sendTimeout: Duration,
                            receiveTimeout: Duration) throws(LoopPortError) -> [UInt8] {
        guard payload.count <= PortWire.maximumPayloadSize else { throw .tooLarge }
        if let port = localPort.value, let mine = LoopRegistry.shared.currentLoopIfAny(), port.isScheduled(on: mine) {
            throw .wouldDeadlock
        }
        let sequence = LoopRemotePort.sequence.wrappingAdd(1, ordering: .relaxed).oldValue
        let datagram = PortWire.encode(.init(kind: .request, sequence: sequence, id: id, payloadLength: payload.count),
                                       payload: payload)
        let channel = try checkOut()
        do {
            try channel.send(datagram, deadline: monotonicDeadline(after: sendTimeout))
            // The receive timeout starts once the request is queued, as in Core Foundation.
            let reply = try channel.awaitReply(to: sequence, deadline: monotonicDeadline(after: receiveTimeout))
            checkIn(channel)
            return reply
        } catch {
            finish(channel, after: error)
            throw error
        }
    }

    // MARK: channels

    private func checkOut() throws(LoopPortError) -> PortChannel {
        let reused = try lock.withLock { () throws(LoopPortError) -> PortChannel? in
            guard valid else { throw .invalid }
            return idle.popLast()
        }
        if let reused { return reused }
        do {
            return try PortChannel(connectedTo: address)
        } catch {
            if error == .invalid { markInvalid() }
            throw error
        }
    }

    private func checkIn(_ channel: PortChannel) {
        lock.withLock {
            if valid && idle.count < LoopRemotePort.keptChannels { idle.append(channel) }
        }
    }

    /// After a failed operation: a channel that timed out waiting for a
    /// reply is discarded (closing it makes a late reply fail at the port
    /// instead of queueing here); one that found the port gone makes this
    /// whole remote port invalid.
    private func finish(_ channel: PortChannel, after error: LoopPortError) {
        switch error {
        case .invalid: markInvalid()
        case .receiveTimedOut, .system: break
        default: checkIn(channel)
        }
    }

    private func markInvalid() {
        lock.withLock {
            valid = false
            idle.removeAll()
        }
    }
}
