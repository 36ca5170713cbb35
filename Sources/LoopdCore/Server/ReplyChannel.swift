import LoopRuntime

/// The write side of a client connection, shared by the main thread and the
/// workers: its descriptor, the replies not yet written, and the replies a
/// worker still owes it.
///
/// A worker encodes the reply of a finished `wait` job itself, and while the
/// main loop sleeps it also writes it: one thread hand-off fewer on a
/// waited job (client → main → worker → client). While the main loop is
/// busy, the main thread writes what workers encoded with its own replies,
/// one write per connection per batch instead of one per thread.
/// Everything here is under one mutex, so the descriptor is closed under it
/// too: a worker can never write to a descriptor number the kernel already
/// gave to another client.
final class ReplyChannel: Sendable {
    private struct State {
        var fd: Int32
        /// Encoded replies not yet written; `start..<output.count` remain.
        var output: [UInt8] = []
        var start = 0
        /// Replies that workers will write here (`wait` jobs they may run).
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

    /// The connection's id, for a worker to name it to the main thread.
    let connectionID: Int
    private let state: Locked<State>

    init(connectionID: Int, fd: Int32) {
        self.connectionID = connectionID
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

    /// No reply is owed by a worker and none waits to be written.
    var isSettled: Bool { state.withLock { $0.owed == 0 && $0.unsent == 0 } }

    /// Appends an encoded reply to be written by `flush()`; returns the bytes unsent.
    func append(_ encode: (inout [UInt8]) -> Void) -> Int {
        state.withLock { s in
            guard !s.closed else { return 0 }
            encode(&s.output)
            return s.unsent
        }
    }

    /// A worker will write one more reply here (a `wait` job was dispatched).
    func expectReply() {
        state.withLock { $0.owed += 1 }
    }

    /// A reply expected from a worker will not come from it (the job never
    /// ran: it was cancelled, or its commit failed); the main thread answers.
    func replyTakenBack() {
        state.withLock { $0.owed -= 1 }
    }

    /// Marks that no more requests are read: a worker that settles the
    /// channel then asks the main thread to close it.
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

    /// Encodes replies a worker owes; with `writeNow`, writes them at once.
    /// Returns whether the main thread must look at the connection (bytes
    /// left unsent, a failed write, or a draining connection now settled);
    /// without `writeNow` the main thread flushes them with its own batch.
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
