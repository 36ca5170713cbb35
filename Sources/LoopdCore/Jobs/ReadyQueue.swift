import LoopPlatform

/// A worker's jobs waiting to start, in arrival order. Taking the first
/// admitted job is O(1) when it is the oldest (every job of the running
/// mode), so a deep queue drains in linear time; a job skipped for its mode
/// stays where it is and later ones pass it.
///
/// Worker thread only.
struct ReadyQueue<Element> {
    private var items: [Element] = []
    /// Items before it were taken.
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func append(contentsOf more: some Sequence<Element>) {
        items.append(contentsOf: more)
    }

    mutating func append(_ element: Element) {
        items.append(element)
    }

    /// Removes and returns the oldest element that `admits`; nil if none does.
    mutating func takeFirst(where admits: (Element) -> Bool) -> Element? {
        guard head < items.count else { return nil }
        let element: Element
        if admits(items[head]) {
            // The usual case, tried before a search: the oldest is admitted.
            element = items[head]
            head += 1
        } else {
            guard let index = items[(head + 1)...].firstIndex(where: admits) else { return nil }
            element = items.remove(at: index)
        }
        if head == items.count {
            items.removeAllKeepingCapacity(ifAtMost: 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            // Drop the taken prefix once it is half the storage: O(1) amortised.
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
