/// Finds a key's place in a table's list of keys. Most tables of a config
/// hold a handful of keys, where comparing them one by one is faster than
/// hashing; a dictionary is built only once a table grows past `linearLimit`.
struct TOMLKeyIndex: Sendable {
    static let linearLimit = 12

    /// The keys in definition order.
    private(set) var keys: [String] = []
    /// Each key's place in `keys`, once there are more than `linearLimit`.
    private var positions: [String: Int]?

    var count: Int { keys.count }

    func find(_ key: String) -> Int? {
        if let positions { return positions[key] }
        return keys.firstIndex(of: key)
    }

    /// Appends `key` and returns its place, or returns nil and changes nothing if it is there already.
    mutating func insert(_ key: String) -> Int? {
        guard find(key) == nil else { return nil }
        let place = keys.count
        if keys.isEmpty { keys.reserveCapacity(8) }
        keys.append(key)
        if positions != nil {
            positions?[key] = place
        } else if keys.count > Self.linearLimit {
            positions = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        }
        return place
    }
}
