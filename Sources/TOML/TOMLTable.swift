/// A TOML table: keys in the order the document first defined them, each
/// with its value and, for a parsed document, where its key was written (so a
/// reader of the config can point at the line of a bad setting).
///
/// The contents live in one reference, shared by copies until one of them
/// appends (copy on write). Besides keeping `TOMLValue` two words wide, this
/// keeps every pointer a `TOMLValue` holds in its first word, untouched by
/// the enum's case tag, which Swift stores in spare pointer bits where it
/// can: LeakSanitizer cannot follow a tagged pointer and would report a
/// live table as leaked.
public struct TOMLTable: Sendable, Equatable {
    /// The keys, and each key's value and position at the same place.
    private final class Storage: @unchecked Sendable {
        // Unchecked: a Storage is only mutated by `TOMLTable.append`, and
        // only while that table holds the sole reference to it, so no two
        // threads can ever see one change.
        var index: TOMLKeyIndex
        var values: [TOMLValue]
        var positions: [TOMLPosition?]

        init(index: TOMLKeyIndex, values: [TOMLValue], positions: [TOMLPosition?]) {
            self.index = index
            self.values = values
            self.positions = positions
        }
    }

    private var storage: Storage

    /// An empty table.
    public init() {
        self.init(index: TOMLKeyIndex(), values: [], positions: [])
    }

    /// A table of `pairs` in their order; a key may appear only once.
    public init(_ pairs: [(String, TOMLValue)]) {
        self.init()
        for (key, value) in pairs { append(value, forKey: key, at: nil) }
    }

    /// The parser's finished table, handed over as it is.
    init(index: TOMLKeyIndex, values: [TOMLValue], positions: [TOMLPosition?]) {
        precondition(index.count == values.count && index.count == positions.count)
        storage = Storage(index: index, values: values, positions: positions)
    }

    /// The keys in definition order.
    public var keys: [String] { storage.index.keys }
    /// How many keys the table has.
    public var count: Int { storage.index.count }
    /// Whether the table has no key.
    public var isEmpty: Bool { storage.index.count == 0 }

    /// The value of `key`, if the table has it.
    public subscript(key: String) -> TOMLValue? { storage.index.find(key).map { storage.values[$0] } }

    /// Whether the table has `key`.
    public func contains(key: String) -> Bool { storage.index.find(key) != nil }

    /// Where `key` was written in the document, if the table came from one.
    public func position(of key: String) -> TOMLPosition? { storage.index.find(key).flatMap { storage.positions[$0] } }

    /// The entries in definition order.
    public var pairs: [(key: String, value: TOMLValue)] { Array(zip(storage.index.keys, storage.values)) }

    /// Adds a key the table does not have yet (a repeat is a bug: the parser
    /// rejects duplicate keys with a proper error before building a table).
    mutating func append(_ value: TOMLValue, forKey key: String, at position: TOMLPosition?) {
        if !isKnownUniquelyReferenced(&storage) {
            storage = Storage(index: storage.index, values: storage.values, positions: storage.positions)
        }
        precondition(storage.index.insert(key) != nil, "TOMLTable: duplicate key \(key)")
        storage.values.append(value)
        storage.positions.append(position)
    }

    /// Equal when both have the same keys in the same order with equal values; positions are ignored.
    public static func == (lhs: TOMLTable, rhs: TOMLTable) -> Bool {
        lhs.storage === rhs.storage || (lhs.keys == rhs.keys && lhs.storage.values == rhs.storage.values)
    }
}

extension TOMLTable: ExpressibleByDictionaryLiteral {
    /// A table of these keys and values, in this order.
    public init(dictionaryLiteral elements: (String, TOMLValue)...) { self.init(elements) }
}
