import LoopPlatform

/// A local message port registered under a name machine-wide: the
/// CFMessagePort / NSMessagePort role (Apple's Threading Programming Guide, listings 3-16 to 3-19).
///
/// Any thread or process on the machine can look the name up with
/// `LoopRemotePort.lookup(name:)` and send it one-way messages or requests.
/// The port is a version-1 source: add it to a loop and each arriving
/// message wakes that loop by itself (R9); `handler` runs on the loop's
/// thread, and for a request its return value is sent back as the reply
/// (nil sends an empty reply). While no run of the port's modes is in
/// progress, messages wait in the kernel (R5) — up to the socket's queue
/// length (`net.unix.max_dgram_qlen` + 1 datagrams, 11 by default), after
/// which senders wait for room up to their send timeout.
///
/// ```swift
/// let port = try LoopMessagePort(name: "com.example.main") { message in
///     message.id == 1 ? Array("pong".utf8) : nil
/// }
/// Loop.current.add(port, forMode: .default)
/// ```
///
/// Underneath it is a Unix datagram socket bound to the abstract address
/// `"\0loopd.port.<name>"`, speaking the format documented on `PortWire`.
/// Keep the port alive for as long as it should answer: releasing it
/// invalidates it. Any process on the machine (in the same network
/// namespace) can reach the name, so by default the port admits only
/// messages its own user (the process's effective uid) or root sent, as the
/// kernel vouches for them: a request from anyone else is answered with
/// `LoopPortError.refused`, a one-way message from anyone else is dropped.
/// `senders: .anyUser` opens it to every local user; treat payloads as
/// input either way.
public final class LoopMessagePort: @unchecked Sendable {
    /// Whose messages a port admits.
    public enum Senders: Sendable, Equatable {
        /// The port process's effective uid, and root.
        case sameUser
        /// Every user on the machine.
        case anyUser
    }

    /// The most payload bytes one message (or reply) may carry: 64 KiB.
    public static let maximumPayloadSize = PortWire.maximumPayloadSize

    /// The longest name, in UTF-8 bytes (the abstract socket address holds
    /// 107 bytes, 11 of which are the `loopd.port.` prefix).
    public static let maximumNameLength = UnixAddress.abstractNameCapacity - PortDirectory.prefix.count

    /// The name the port is registered under.
    public let name: String
    /// Whose messages it admits.
    public let senders: Senders
    /// The uid `.sameUser` admits besides root.
    private let ownUID = effectiveUserID()
    let core: KernelSource
    private let handler: @Sendable (LoopMessage) -> [UInt8]?
    private let lock = Lock()
    /// nil once invalidated. Guarded by lock, as is every use of its descriptor.
    private var socket: UnixDatagramSocket?
    /// Where datagrams are received. Guarded by lock.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Registers a port under `name`.
    /// - Parameters:
    ///   - name: 1...`maximumNameLength` UTF-8 bytes, no NUL; unique on the machine.
    ///   - order: firing order among ready sources of a loop; lower first (R10).
    ///   - senders: whose messages it admits (see the type's description).
    ///   - handler: called on the loop's thread for each message; for a
    ///     request, what it returns is the reply.
    /// - Throws: `.invalidName`, `.nameInUse`, or `.system` if no socket could be made.
    public init(name: String, order: Int = 0, senders: Senders = .sameUser,
                _ handler: @escaping @Sendable (LoopMessage) -> [UInt8]?) throws(LoopPortError) {
        let address = try PortDirectory.address(for: name)
        let socket: UnixDatagramSocket
        do throws(PlatformError) {
            socket = try UnixDatagramSocket()
            // Before bind: no datagram can arrive without its sender's credentials.
            if senders == .sameUser { try socket.enableSenderCredentials() }
            try socket.bind(to: address)
        } catch {
            throw error.isAddressInUse ? .nameInUse : .system(error)
        }
        self.name = name
        self.senders = senders
        self.handler = handler
        self.socket = socket
        buffer = .allocate(byteCount: PortWire.maximumDatagramSize, alignment: 8)
        let owner = WeakOwner<LoopMessagePort>()
        let fd = socket.fd
        core = KernelSource(fd: fd, interest: .readable, order: order,
                            label: { "message port \"\(name)\" fd = \(fd)" },
                            handler: { _, single in owner.value?.receive(single: single) })
        owner.value = self
        core.adopt(owner: self)
        PortDirectory.shared.register(self)
    }

    deinit {
        invalidate()
        buffer.deallocate()
    }

    /// False once invalidated.
    public var isValid: Bool { core.isValid }

    /// Removes the port from every loop, answers the requests still queued
    /// with "port invalidated" (their senders get `.invalid` at once instead
    /// of waiting out their timeouts), closes the socket and frees the name,
    /// which can then be registered again. Any thread. A reply the handler
    /// is computing right now is dropped.
    public func invalidate() {
        core.invalidate()
        PortDirectory.shared.unregister(self)
        lock.withLock {
            guard let socket else { return }
            // First, no more datagrams: from here a send fails at once, even
            // if a child this process is forking holds the socket open a
            // little past the close below. So the drain finds all there is.
            socket.shutdownReading()
            // Bounded all the same: the queue is the kernel's, however long.
            drain: for _ in 0..<1024 {
                switch takeLocked(from: socket) {
                case .empty: break drain
                case .malformed, .refused: continue
                case .message(let header, let sender, _):
                    if header.kind == .request {
                        replyLocked(to: header, sender: sender, status: .portInvalidated, payload: [], on: socket)
                    }
                }
            }
            socket.close()
            self.socket = nil
        }
    }

    /// The port's socket descriptor; nil once invalidated. For tests.
    var descriptor: Int32? { lock.withLock { socket?.fd } }

    /// Whether a datagram waits in the port's queue. For tests.
    var hasQueuedDatagram: Bool {
        lock.withLock {
            guard let socket else { return false }
            let probe = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<1])
            return (try? socket.receive(into: probe, peek: true)) != nil
        }
    }

    /// Whether `loop` holds this port in any of its modes.
    func isScheduled(on loop: Loop) -> Bool {
        loop.lock.withLock { loop.modes.values.contains { $0.contains(core) } }
    }

    // MARK: receiving (the loop's thread)

    /// Handles the queued messages: one if the run returns after one source,
    /// else a bounded batch (the descriptor is level-triggered, so what is
    /// left wakes the next pass). Malformed datagrams are dropped and do not
    /// count as messages, but do count against the batch's reads.
    private func receive(single: Bool) {
        var handled = 0
        var reads = 0
        while handled < (single ? 1 : 16) && reads < 64 {
            reads += 1
            let taken = lock.withLock { () -> Taken in
                guard let socket else { return .empty }  // invalidated
                return takeLocked(from: socket)
            }
            guard case .message(let header, let sender, let payload) = taken else {
                if case .malformed = taken { continue }
                if case .refused = taken { continue }
                return
            }
            handled += 1
            // The handler runs without the lock: it may invalidate this port,
            // send to it, or run the loop again (R21).
            let reply = handler(LoopMessage(id: header.id, payload: payload))
            guard header.kind == .request else { continue }
            let body = reply ?? []
            let fits = body.count <= PortWire.maximumPayloadSize
            lock.withLock {
                guard let socket else { return }  // invalidated by the handler: dropped
                replyLocked(to: header, sender: sender, status: fits ? .ok : .replyTooLarge,
                            payload: fits ? body : [], on: socket)
            }
        }
    }

    /// What one read from the socket gave.
    private enum Taken {
        case empty
        /// Foreign or damaged, or a kind a port never receives (a reply): dropped.
        case malformed
        /// From a user the port does not admit: dropped, a request answered `senderRefused`.
        case refused
        case message(PortWire.Header, UnixAddress, [UInt8])
    }

    /// Takes one datagram and checks it; never trusts its bytes. Lock held.
    private func takeLocked(from socket: UnixDatagramSocket) -> Taken {
        let datagram: ReceivedDatagram?
        do { datagram = try socket.receive(into: buffer) } catch { return .empty }
        guard let datagram else { return .empty }
        guard let header = PortWire.decode(UnsafeRawBufferPointer(buffer), length: datagram.length),
              header.kind != .reply
        else { return .malformed }
        if senders == .sameUser, datagram.senderUID != ownUID, datagram.senderUID != 0 {
            if header.kind == .request {
                replyLocked(to: header, sender: datagram.sender, status: .senderRefused, payload: [], on: socket)
            }
            return .refused
        }
        let start = PortWire.headerSize
        let payload = Array(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + header.payloadLength)]))
        return .message(header, datagram.sender, payload)
    }

    /// Sends a reply without ever blocking the loop: if the requester's
    /// queue is full, or it is gone (it timed out and closed its socket), or
    /// it sent from an unbound socket, the reply is dropped and the
    /// requester's receive timeout tells it. Lock held.
    private func replyLocked(to request: PortWire.Header, sender: UnixAddress, status: PortWire.Status,
                             payload: [UInt8], on socket: UnixDatagramSocket) {
        guard sender.isNamed else { return }
        let header = PortWire.Header(kind: .reply, status: status, sequence: request.sequence,
                                     id: request.id, payloadLength: payload.count)
        let datagram = PortWire.encode(header, payload: payload)
        _ = datagram.withUnsafeBytes { try? socket.send($0, to: sender) }
    }
}

extension Loop {
    /// Adds a message port to `mode` (or every common mode). Adding it twice has no effect.
    public func add(_ port: LoopMessagePort, forMode mode: Mode) { add(port.core, forMode: mode) }
    /// Removes a message port from `mode`.
    public func remove(_ port: LoopMessagePort, forMode mode: Mode) { remove(port.core, forMode: mode) }
    /// Whether the message port is in `mode`.
    public func contains(_ port: LoopMessagePort, inMode mode: Mode) -> Bool { contains(port.core, inMode: mode) }
}
