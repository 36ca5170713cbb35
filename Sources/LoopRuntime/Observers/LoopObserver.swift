import Synchronization

/// Watches a loop's activities (R16): called on the loop's thread at each
/// activity it registered for, lower `order` first. A one-shot observer
/// invalidates itself after its first call.
public final class LoopObserver: @unchecked Sendable {
    /// The activities it is called for.
    public let activities: Loop.Activity
    /// Whether it stays after its first call.
    public let repeats: Bool
    /// Observers of the same activity are called in ascending order.
    public let order: Int
    let sequence = nextItemSequence()
    let handler: @Sendable (LoopObserver, Loop.Activity) -> Void
    let links = ItemLinks()
    private let valid = Atomic<Bool>(true)  // any thread

    /// Creates an observer; add it to a loop's mode to start observing.
    public init(activities: Loop.Activity, repeats: Bool = true, order: Int = 0,
                _ handler: @escaping @Sendable (LoopObserver, Loop.Activity) -> Void) {
        self.activities = activities
        self.repeats = repeats
        self.order = order
        self.handler = handler
    }

    /// False once invalidated (or called once, if it does not repeat).
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes it from every mode of every loop; it is never called again.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for loop in links.takeAll() { loop.detach(self) }
    }
}
