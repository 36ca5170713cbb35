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
    @exclusivity(unchecked) private var framer: LineFramer
    /// The descriptor's write side and the replies not yet written or
    /// still owed, shared with the workers that answer waited jobs.
    let sink: ReplySink
    /// The connection as the job scheduler sees it.
    let requester: Requester
    private let maxPendingBytes: Int
    /// Reading is paused: more than `maxPendingBytes` of replies wait unread.
    private(set) var readPaused = false
    /// The framer holds complete lines beyond this pass's share: they are
    /// handled from the server's backlog before the socket is read again.
    private var hasBufferedLines = false
    /// Whether the server's backlog holds this connection now.
    private var inBacklog = false
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
        // Lines already buffered go first, from the backlog, before the socket is read again.
        if state == .open && !readPaused && !hasBufferedLines && (readiness.readable || readiness.hangup) { serve() }
        closeIfDone()
    }

    /// Handles up to `limits.max_requests_per_pass` requests: the lines
    /// already buffered first, then what the socket has (a bounded amount:
    /// the level-triggered source calls again). A connection with more
    /// complete lines than its share keeps them buffered, does not read
    /// its socket meanwhile (so the buffer stays one read's size), and
    /// waits in the server's backlog, which serves each such connection
    /// once per pass in turn: one client pipelining thousands of requests
    /// cannot hold the main loop, its timers (the watchdog's) or the other
    /// clients for more than its share.
    func serve() {
        // Read once: each read of an unowned reference retains and releases.
        let server = self.server
        // A worker may have answered a job whose end the main thread has
        // not recorded yet; a request sent after that answer must see it.
        server.scheduler.recordReports()
        var budget = server.config.limits.maxRequestsPerPass
        let hadBufferedLines = hasBufferedLines
        if hasBufferedLines {
            guard handleBuffered(&budget) else { return }
        }
        reading: for _ in 0..<8 {
            guard state == .open, !readPaused, !hasBufferedLines, budget > 0 else { break }
            let result = server.readBuffer.withUnsafeMutableBytes { Descriptor.read(fd, into: $0) }
            switch result {
            case .bytes(let n):
                server.readBuffer.withUnsafeBytes { raw in framer.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) }
                guard handleBuffered(&budget) else { return }
                if n < server.readBuffer.count { break reading }
            case .wouldBlock:
                break reading
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
        if state == .open && hasBufferedLines && !readPaused && !inBacklog {
            inBacklog = true
            server.scheduleBacklog(self)
        }
        // Only a change of backlog changes what the socket is watched for;
        // re-aiming it every pass would cost a system call and a poll.
        if hasBufferedLines != hadBufferedLines { updateInterest() }
    }

    /// The server's backlog reached this connection: its next share.
    func serveBacklog() {
        inBacklog = false
        guard state == .open, !readPaused, hasBufferedLines else { return }
        serve()
        closeIfDone()
    }

    /// Hands buffered lines to the server, at most `budget` of them, and
    /// takes what it handled from the budget; false when the connection
    /// stopped reading (an over-long line).
    private func handleBuffered(_ budget: inout Int) -> Bool {
        var handled = 0
        let server = self.server
        let drained = framer.drain(maxLines: budget) { line in
            handled += 1
            server.handleLine(line, from: self)
        }
        budget -= handled
        hasBufferedLines = drained == .more
        guard drained != .lineTooLong else {
            sink.send(Response.error(id: nil, ProtocolError(.tooLarge, "request line longer than \(framer.maxLineBytes) bytes; closing the connection")))
            stopReading()
            return false
        }
        return true
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
            // Lines buffered before the pause are next, from the backlog.
            if hasBufferedLines && state == .open && !inBacklog {
                inBacklog = true
                server.scheduleBacklog(self)
            }
        }
        updateInterest(unsent: unsent)
        closeIfDone()
    }

    private func updateInterest(unsent: Int? = nil) {
        guard state != .closed else { return }
        var interest: IOInterest = []
        if state == .open && !readPaused && !hasBufferedLines { interest.insert(.readable) }
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
