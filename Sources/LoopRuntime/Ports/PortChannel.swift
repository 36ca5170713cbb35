import LoopPlatform

/// One socket of a `LoopRemotePort`: connected to the port, so `send` goes
/// there and `poll(POLLOUT)` waits for room in the port's queue, and bound
/// to a private autobound name, so the port's replies come back to it and
/// nobody else can write to it. Used by one thread at a time.
final class PortChannel {
    private let socket: UnixDatagramSocket
    /// Where replies land; allocated by the first request.
    private var buffer: UnsafeMutableRawBufferPointer?

    /// - Throws: `.invalid` when no port is bound at `address`.
    init(connectedTo address: UnixAddress) throws(LoopPortError) {
        let made: UnixDatagramSocket
        do throws(PlatformError) {
            made = try UnixDatagramSocket()
            try made.bindAutomatically()
            try made.connect(to: address)
        } catch {
            throw error.isPeerGone ? .invalid : .system(error)
        }
        socket = made
    }

    deinit { buffer?.deallocate() }

    /// Queues `datagram` at the port, waiting for room until `deadline`
    /// (monotonic nanoseconds).
    func send(_ datagram: [UInt8], deadline: UInt64) throws(LoopPortError) {
        while true {
            let attempt = datagram.withUnsafeBytes { raw in
                Result { () throws(PlatformError) -> Bool in try socket.send(raw) }
            }
            switch attempt {
            case .success(true):
                return
            case .success(false):
                // The port's queue is full: sleep in poll until it has room.
                if try !wait(writable: true, deadline: deadline) { throw .sendTimedOut }
            case .failure(let error):
                if error.isPeerGone { throw .invalid }
                if error.isMessageTooLarge { throw .tooLarge }
                throw .system(error)
            }
        }
    }

    /// Waits until `deadline` for the reply to request `sequence`. Anything
    /// else that arrives (a malformed datagram, a reply to an older request)
    /// is dropped.
    func awaitReply(to sequence: UInt64, deadline: UInt64) throws(LoopPortError) -> [UInt8] {
        let buffer = self.buffer ?? .allocate(byteCount: PortWire.maximumDatagramSize, alignment: 8)
        self.buffer = buffer
        while true {
            if try !wait(writable: false, deadline: deadline) { throw .receiveTimedOut }
            let received: ReceivedDatagram?
            do throws(PlatformError) { received = try socket.receive(into: buffer) } catch { throw .system(error) }
            guard let received,
                  let header = PortWire.decode(UnsafeRawBufferPointer(buffer), length: received.length),
                  header.kind == .reply, header.sequence == sequence
            else { continue }
            switch header.status {
            case .ok:
                let start = PortWire.headerSize
                return Array(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + header.payloadLength)]))
            case .portInvalidated:
                throw .invalid
            case .replyTooLarge:
                throw .tooLarge
            case .senderRefused:
                throw .refused
            }
        }
    }

    private func wait(writable: Bool, deadline: UInt64) throws(LoopPortError) -> Bool {
        do throws(PlatformError) {
            return try socket.wait(writable: writable, untilMonotonic: deadline)
        } catch {
            throw .system(error)
        }
    }
}
