import LoopPlatform
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

    /// The public source this core serves (a port, a descriptor, signal or
    /// process source). While the core is in at least one loop it is held
    /// strongly in `retainedOwner`: as with CFRunLoop, a loop keeps what was
    /// added to it alive until it is removed or invalidated, even when the
    /// caller keeps no reference (the resident-thread pattern adds a port and forgets it). Both
    /// guarded by `ownerLock`.
    private weak var owner: AnyObject?
    private var retainedOwner: AnyObject?
    private let ownerLock = Lock()

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

    /// Names the public source that owns this core; called once, at the end
    /// of the owner's init.
    func adopt(owner: AnyObject) {
        ownerLock.withLock { self.owner = owner }
    }

    /// A loop has just been added to `links`: hold the owner.
    func retainOwner() {
        ownerLock.withLock {
            if isValid, retainedOwner == nil { retainedOwner = owner }
        }
    }

    /// `links` may have lost its last loop, or the core was invalidated: let
    /// the owner go. Never called with a loop's lock held, because dropping
    /// the last reference runs the owner's deinit, which invalidates this core.
    func releaseOwnerIfUnlinked() {
        let released: AnyObject? = ownerLock.withLock {
            guard !isValid || links.isEmpty else { return nil }
            defer { retainedOwner = nil }
            return retainedOwner
        }
        withExtendedLifetime(released) {}  // the last release happens here, after the lock
    }

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
        if closesDescriptor { Descriptor.closeOwned(fd) }
        releaseOwnerIfUnlinked()
    }
}
