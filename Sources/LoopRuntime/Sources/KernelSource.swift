import Synchronization

/// The loop's view of a version-1 source: a descriptor the kernel makes
/// ready (R9). `LoopPort`, `LoopFileDescriptorSource`, `LoopSignalSource` and
/// `LoopProcessSource` each own one. The descriptor is owned by the public
/// source, which invalidates this core (removing it from every epoll set)
/// before closing it, so a recycled descriptor number can never be watched
/// by mistake.
final class KernelSource: @unchecked Sendable {
    /// The epoll token; unique in the process.
    let token: UInt64 = nextItemSequence() | (1 << 62)
    let fd: Int32
    let order: Int
    /// What the CFRunLoop-style dump prints for it.
    let label: @Sendable () -> String
    /// Runs on the loop's thread when `fd` is ready. The flag is true when the
    /// run returns after one source, so a port hands over a single message.
    let handler: @Sendable (ReadinessEvent, _ single: Bool) -> Void
    let links = ItemLinks()
    private let interestBits: Atomic<UInt32>  // any thread
    private let valid = Atomic<Bool>(true)     // any thread

    /// Whether invalidation also closes `fd` (a descriptor the source made
    /// for itself, such as a signalfd or pidfd).
    let closesDescriptor: Bool

    init(fd: Int32, interest: IOInterest, order: Int, closesDescriptor: Bool = false,
         label: @escaping @Sendable () -> String,
         handler: @escaping @Sendable (ReadinessEvent, Bool) -> Void) {
        self.fd = fd
        self.closesDescriptor = closesDescriptor
        self.order = order
        self.label = label
        self.handler = handler
        self.interestBits = Atomic(interest.rawValue)
    }

    var isValid: Bool { valid.load(ordering: .acquiring) }

    var interest: IOInterest { IOInterest(rawValue: interestBits.load(ordering: .acquiring)) }

    /// Changes what readiness is watched; the loops holding it re-register it
    /// before they next sleep.
    func setInterest(_ new: IOInterest) {
        let old = interestBits.exchange(new.rawValue, ordering: .acquiringAndReleasing)
        guard old != new.rawValue else { return }
        for loop in links.snapshot() { loop.kernelInterestChanged() }
    }

    /// Removes it from every loop, synchronously: when this returns, no epoll
    /// set holds `fd`, the handler will not be called again, and an owned
    /// descriptor is closed. Runs once, however often it is called.
    func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for loop in links.takeAll() { loop.detach(self) }
        // No epoll set holds it any more, so its number can be reused safely.
        if closesDescriptor { closeDescriptor(fd) }
    }
}
