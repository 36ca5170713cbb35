import LoopPlatform
import LoopRuntime

/// The main thread's side of a connection, as its reply sink sees it.
protocol ReplyEndpoint: AnyObject {
    /// A reply was queued on the sink: flush it with this batch, and stop
    /// reading requests while `unsent` bytes are too many. Main thread.
    func replyQueued(unsent: Int)
}

/// The write side of a client connection: its descriptor, the replies not
/// yet written, and the replies still owed to it. Every reply to the
/// connection goes through here, whichever thread encodes it.
///
/// A worker encodes the reply of a finished waited job itself, and while the
/// main loop sleeps it also writes it: one thread hand-off fewer on a
/// waited job (client → main → worker → client). While the main loop is
/// busy, the main thread writes what workers encoded with its own replies,
/// one write per connection per batch instead of one per thread.
/// Everything here is under one mutex, so the descriptor is closed under it
/// too: a worker can never write to a descriptor number the kernel already
/// gave to another client.
final class ReplySink: @unchecked Sendable {
    private struct State {
        var fd: Int32
        /// Encoded replies not yet written; `start..<output.count` remain.
        var output: [UInt8] = []
        var start = 0
        /// Replies still to come: waited jobs (a worker or the main thread
        /// answers), `wait` and `cancel` requests parked until a job ends,
        /// `mode` switches in progress.
        var owed = 0
        /// The main thread reads no more requests; it closes the
        /// connection once nothing is owed or unsent.
        var draining = false
        /// A write failed (the peer is gone); the main thread closes it.
        var failed = false
        var closed = false

        var unsent: Int { output.count - start }

        /// Writes what is unsent, as much as the socket takes in one call.
        mutating func writeOut() {
            guard !failed, unsent > 0 else { return }
            let result = output.withUnsafeBytes { raw in
                UnixSocket.write(fd, UnsafeRawBufferPointer(rebasing: raw[start...]))
            }
            switch result {
            case .success(let n):
                start += n
                if start == output.count {
                    output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
                    start = 0
                } else if start > 1 << 16 {
                    output.removeFirst(start)
                    start = 0
                }
            case .failure:
                failed = true
                output = []
                start = 0
            }
        }
    }

    private let state: Locked<State>
    /// Told when the main thread queues a reply; the connection sets it
    /// and clears it when it closes. Main thread only.
    var endpoint: (any ReplyEndpoint)?

    init(fd: Int32) {
        state = Locked(State(fd: fd))
    }

    /// What the main thread must do after a worker wrote here.
    enum Attention {
        /// Nothing: every byte went out and the connection stays open.
        case none
        /// Flush what the socket did not take, or close a finished or failed connection.
        case needed
    }

    // MARK: main thread

    /// Bytes encoded and not yet written.
    var unsentBytes: Int { state.withLock { $0.unsent } }

    /// No reply is owed and none waits to be written.
    var isSettled: Bool { state.withLock { $0.owed == 0 && $0.unsent == 0 } }

    /// Queues an encoded reply, written with this batch.
    func send(_ encode: (inout [UInt8]) -> Void) {
        let unsent = state.withLock { s -> Int? in
            guard !s.closed else { return nil }
            encode(&s.output)
            return s.unsent
        }
        if let unsent { endpoint?.replyQueued(unsent: unsent) }
    }

    /// Queues a reply line.
    func send(_ line: String) {
        var line = line
        send { out in line.withUTF8 { out.append(contentsOf: $0) } }
    }

    /// One more reply will come later (a waited job, a `wait`, a `cancel`
    /// of a running job, a `mode` switch): a draining connection stays
    /// open until it is sent.
    func owe() {
        state.withLock { $0.owed += 1 }
    }

    /// Queues a reply that was owed.
    func settle(_ encode: (inout [UInt8]) -> Void) {
        state.withLock { $0.owed -= 1 }
        send(encode)
    }

    /// Marks that no more requests are read: a worker that settles the
    /// sink then asks the main thread to close it.
    func startDraining() {
        state.withLock { $0.draining = true }
    }

    /// Writes as much as the socket takes; returns the bytes still unsent,
    /// or nil if the peer is gone.
    func flush() -> Int? {
        state.withLock { s in
            guard !s.closed else { return 0 }
            s.writeOut()
            return s.failed ? nil : s.unsent
        }
    }

    /// Closes the descriptor and forgets what was unsent.
    func close() {
        state.withLock { s in
            guard !s.closed else { return }
            s.closed = true
            s.output = []
            s.start = 0
            Descriptor.close(s.fd)
        }
    }

    // MARK: workers

    /// Settles `count` owed replies a worker encodes; with `writeNow`,
    /// writes them at once. Returns whether the main thread must look at
    /// the connection (bytes left unsent, a failed write, or a draining
    /// connection now settled); without `writeNow` the main thread flushes
    /// them with its own batch.
    func deliver(_ count: Int, writeNow: Bool, _ encode: (inout [UInt8]) -> Void) -> Attention {
        state.withLock { s in
            s.owed -= count
            guard !s.closed else { return .none }
            encode(&s.output)
            guard writeNow else { return .none }
            s.writeOut()
            return s.unsent > 0 || s.failed || (s.draining && s.owed == 0) ? .needed : .none
        }
    }
}
