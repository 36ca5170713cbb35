/// The ids of the last `capacity` finished jobs, oldest first out: which
/// job to forget when one more finishes. A ring, so its storage never
/// outgrows the window however many jobs pass through it.
///
/// Main thread only.
struct FinishedWindow {
    let capacity: Int
    private var ids: [String] = []
    /// The oldest id's slot, once the ring is full.
    private var oldest = 0

    init(capacity: Int) {
        precondition(capacity > 0, "the finished-job window holds at least one job")
        self.capacity = capacity
    }

    var count: Int { ids.count }

    /// Adds `id` as the newest; returns the id it displaces, if full.
    mutating func add(_ id: String) -> String? {
        guard ids.count == capacity else {
            ids.append(id)
            return nil
        }
        let evicted = ids[oldest]
        ids[oldest] = id
        oldest = (oldest + 1) % capacity
        return evicted
    }
}
