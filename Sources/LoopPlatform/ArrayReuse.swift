extension Array {
    /// Empties the array and keeps its storage for reuse, as
    /// `removeAll(keepingCapacity: true)` does, unless that storage is
    /// larger than `maxCapacity` elements (then it is freed). That call
    /// always goes through the generic range replacement, even for an empty
    /// array; the lists a loop pass reuses hold none, one or two elements,
    /// which `removeLast` takes for a fraction of the cost.
    @inlinable @inline(__always)
    public mutating func removeAllKeepingCapacity(ifAtMost maxCapacity: Int = .max) {
        if capacity > maxCapacity { return removeAll() }
        guard !isEmpty else { return }
        if count > 4 { return removeAll(keepingCapacity: true) }
        repeat { removeLast() } while !isEmpty
    }
}
