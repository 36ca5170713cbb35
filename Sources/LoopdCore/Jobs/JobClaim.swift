import Synchronization

/// Who got to a waiting job first: its lane, which starts it, or a
/// `cancel`, which stops it from ever starting. The only part of a job that
/// two threads change; compare-and-swap makes the race have one winner.
/// Stored inline in its job (no allocation of its own).
struct JobClaim: ~Copyable, Sendable {
    private enum Value: UInt8 {
        case open = 0, started, cancelled
    }

    private let bits = Atomic<UInt8>(Value.open.rawValue)

    /// The lane takes the job to run it; false if a cancel won. Worker thread.
    func start() -> Bool { take(.started) }

    /// A cancel takes the job; false if its lane started it first. Main thread.
    func cancel() -> Bool { take(.cancelled) }

    /// Opens the claim again for the job's next attempt. Main thread, once
    /// the lane has reported the previous attempt's end (nothing else can
    /// touch the claim then).
    func reopen() { bits.store(Value.open.rawValue, ordering: .releasing) }

    /// Whether the lane started the job. Any thread.
    var isStarted: Bool { bits.load(ordering: .acquiring) == Value.started.rawValue }

    private func take(_ value: Value) -> Bool {
        bits.compareExchange(expected: Value.open.rawValue, desired: value.rawValue, ordering: .acquiringAndReleasing).exchanged
    }
}
