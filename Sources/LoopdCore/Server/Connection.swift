import LoopPlatform
import LoopRuntime
import LoopdProtocol

/// One client connection on the main loop: a descriptor source, a line
/// framer and its reply sink. Main thread only.
///
/// The main thread's replies are buffered and flushed once per batch; the
/// reply of a waited job is written by the worker that ran it, through the
/// same `ReplySink`. While more than the configured amount of replies
/// waits unread, the connection stops reading requests (backpressure)
/// instead of buffering without bound.
final class Connection: ReplyEndpoint, @unchecked Sendable {
    enum State {
        /// Reading requests and writing replies.
        case open
        /// No more requests will be read (the peer shut its side, or a
        /// framing error): replies still pending are written, then it closes.
        case draining
        case closed
    }

    let id: Int
    let fd: Int32
    let peer: UnixSocket.Peer
    private(set) var state = State.open
    private var source: LoopFileDescriptorSource?
    private var framer: LineFramer
    /// The descriptor's write side and the replies not yet written or
    /// still owed, shared with the workers that answer waited jobs.
    let sink: ReplySink
    /// The connection as the job scheduler sees it.
    let requester: Requester
    private let maxPendingBytes: Int
    /// Reading is paused: more than `maxPendingBytes` of replies wait unread.
    private(set) var readPaused = false
    private unowned let server: Server

    init(id: Int, fd: Int32, peer: UnixSocket.Peer, server: Server, limits: DaemonConfig.Limits) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.server = server
        self.framer = LineFramer(maxLineBytes: limits.maxLineBytes)
        sink = ReplySink(fd: fd)
        requester = Requester(sink: sink, owner: JobOwner(peer))
        self.maxPendingBytes = limits.maxPendingReplyBytes
        sink.endpoint = self
    }

    /// Starts watching the descriptor on `loop`.
    func attach(to loop: Loop) {
        let s = LoopFileDescriptorSource(fileDescriptor: fd, interest: .readable) { [unowned self] readiness in
            self.handle(readiness)
        }
        source = s
        loop.add(s, forMode: .default)
    }

    var unsentBytes: Int { sink.unsentBytes }

    private func handle(_ readiness: LoopFileDescriptorSource.Readiness) {
        if readiness.writable || (readiness.hangup && unsentBytes > 0) { flush() }
        if state == .open && !readPaused && (readiness.readable || readiness.hangup) { readRequests() }
        closeIfDone()
    }

    /// Reads what is there (a bounded amount, to stay fair to other clients:
    /// the level-triggered source calls again) and handles each line.
    private func readRequests() {
        // A worker may have answered a job whose end the main thread has
        // not recorded yet; a request sent after that answer must see it.
        server.scheduler.recordReports()
        for _ in 0..<8 {
            guard state == .open, !readPaused else { return }
            let result = server.readBuffer.withUnsafeMutableBytes { Descriptor.read(fd, into: $0) }
            switch result {
            case .bytes(let n):
                let outcome = server.readBuffer.withUnsafeBytes { raw in
                    framer.append(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { line in
                        server.handleLine(line, from: self)
                    }
                }
                if outcome == .lineTooLong {
                    sink.send(Response.error(id: nil, ProtocolError(.tooLarge, "request line longer than \(framer.maxLineBytes) bytes; closing the connection")))
                    stopReading()
                    return
                }
                if n < server.readBuffer.count { return }
            case .wouldBlock:
                return
            case .endOfFile:
                // A peer that closed entirely can read no reply: close now,
                // dropping what is owed to it (its `wait`s cost nothing
                // more). One that only shut its writing side still gets
                // every reply in flight.
                if UnixSocket.peerHasClosed(fd) { close() } else { stopReading() }
                return
            case .failed:
                close()
                return
            }
        }
    }

    /// A reply was queued on the sink: flush it at the end of the current
    /// batch; stop reading while too much waits.
    func replyQueued(unsent: Int) {
        guard state != .closed else { return }
        server.scheduleFlush(self)
        if unsent > maxPendingBytes && !readPaused {
            readPaused = true
            updateInterest()
        }
    }

    /// Writes as much of the buffer as the socket takes (main's replies and
    /// whatever a worker's write left), then closes the connection if it is
    /// done or its peer is gone.
    func flush() {
        guard state != .closed else { return }
        guard let unsent = sink.flush() else {
            // The peer is gone: its jobs go on; their replies have nowhere to go.
            close()
            return
        }
        // Replies a worker wrote count too: a client that never reads its
        // `wait` replies is throttled like one that never reads main's.
        if unsent > maxPendingBytes {
            readPaused = true
        } else if readPaused && unsent <= maxPendingBytes / 2 {
            readPaused = false
        }
        updateInterest(unsent: unsent)
        closeIfDone()
    }

    private func updateInterest(unsent: Int? = nil) {
        guard state != .closed else { return }
        var interest: IOInterest = []
        if state == .open && !readPaused { interest.insert(.readable) }
        if (unsent ?? unsentBytes) > 0 { interest.insert(.writable) }
        source?.interest = interest
    }

    private func stopReading() {
        if state == .open {
            state = .draining
            sink.startDraining()
        }
        updateInterest()
    }

    /// Closes a draining connection once nothing is owed to it any more.
    func closeIfDone() {
        if state == .draining && sink.isSettled { close() }
    }

    func close() {
        guard state != .closed else { return }
        state = .closed
        source?.invalidate()
        source = nil
        sink.close()
        sink.endpoint = nil
        server.connectionClosed(self)
    }
}
