/// A table while its document is being read. Unlike `TOMLTable` it remembers
/// how it came to exist, because TOML's rules about defining a table twice
/// depend on it:
///
/// - `[a.b.c]` creates `a` and `a.b` *implicitly*; a later `[a]` or `[a.b]`
///   may still define them, once.
/// - A header defines its table; no other header may define it again, and
///   dotted keys written elsewhere may not add to it.
/// - `a.b.c = 1` defines `a` and `a.b` through *dotted keys*; no header may
///   define them afterwards, though headers may add sub-tables (`[a.b.x]`).
/// - Inline tables and static arrays (`a = { … }`, `a = [ … ]`) are complete
///   where they are written; they are stored as finished `TOMLValue`s, so
///   nothing can reach into them.
/// - `[[a]]` appends a table to the array of tables `a`; headers below it
///   (`[a.b]`, `[[a.c]]`) refer to its last table.
final class TOMLTableNode {
    /// How a table came to exist (see above).
    enum Origin {
        /// The document itself, or an inline table while it is being read:
        /// tables that no key or header can name from outside.
        case root, inline
        case implicit, header, dotted
    }

    /// What a key holds while parsing.
    enum Slot {
        /// A finished value: a scalar, a static array or an inline table.
        case value(TOMLValue)
        case table(TOMLTableNode)
        /// An array of tables, `[[key]]`.
        case arrayOfTables(TOMLTableArrayNode)
    }

    var origin: Origin
    /// Where a header or a dotted key defined this table, for "already defined" messages.
    var definedAt: TOMLPosition?
    /// The table's full key path as TOML would write it (`servers."east 1"`), for messages.
    let path: String
    // As in `TOMLTable`: the keys, and each key's slot and position at the same place.
    private var index = TOMLKeyIndex()
    private var slots: [Slot] = []
    private var positions: [TOMLPosition?] = []

    init(origin: Origin, path: String, definedAt: TOMLPosition? = nil) {
        self.origin = origin
        self.path = path
        self.definedAt = definedAt
    }

    /// What `key` holds, and where the key was first written.
    subscript(key: String) -> (slot: Slot, position: TOMLPosition)? {
        guard let i = index.find(key), let position = positions[i] else { return nil }
        return (slots[i], position)
    }

    /// Adds `key` unless the table has it already; then returns where it was first written.
    @discardableResult
    func addIfAbsent(_ slot: Slot, forKey key: String, at position: TOMLPosition) -> TOMLPosition? {
        guard index.insert(key) != nil else {
            return index.find(key).flatMap { positions[$0] } ?? position
        }
        if slots.isEmpty {
            // Most tables get a few keys: allocate once rather than at 1, 2, 4 and 8.
            slots.reserveCapacity(8)
            positions.reserveCapacity(8)
        }
        slots.append(slot)
        positions.append(position)
        return nil
    }

    /// A new sub-table stored under `key`, which the caller has found absent.
    func addTable(_ key: String, origin: Origin, at position: TOMLPosition) -> TOMLTableNode {
        let node = TOMLTableNode(origin: origin, path: childPath(key), definedAt: origin == .implicit ? nil : position)
        addIfAbsent(.table(node), forKey: key, at: position)
        return node
    }

    /// The path of the key `key` in this table.
    func childPath(_ key: String) -> String {
        let segment = TOMLTableNode.display([key])
        return path.isEmpty ? segment : "\(path).\(segment)"
    }

    /// The finished table. Recursion is bounded by `TOMLParser.maxNesting`.
    func build() -> TOMLTable {
        let values = slots.map { slot -> TOMLValue in
            switch slot {
            case .value(let v): v
            case .table(let node): .table(node.build())
            case .arrayOfTables(let array): .array(array.tables.map { .table($0.build()) })
            }
        }
        return TOMLTable(index: index, values: values, positions: positions)
    }

    /// A key path written the way TOML would: bare segments where allowed, else quoted.
    static func display(_ segments: [String]) -> String {
        segments.map { segment in
            if !segment.isEmpty && segment.utf8.allSatisfy(\.isBareKeyByte) { return segment }
            var quoted = "\""
            for scalar in segment.unicodeScalars {
                switch scalar {
                case "\"": quoted += "\\\""
                case "\\": quoted += "\\\\"
                case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                    quoted += "\\u" + TOMLScanner.codePoint(scalar.value).dropFirst(2)
                default: quoted.unicodeScalars.append(scalar)
                }
            }
            return quoted + "\""
        }.joined(separator: ".")
    }
}

/// The tables of one array of tables, appended to in place by each `[[key]]`.
final class TOMLTableArrayNode {
    /// Never empty: the array is created with its first table.
    private(set) var tables: [TOMLTableNode]
    var last: TOMLTableNode

    init(_ first: TOMLTableNode) {
        tables = [first]
        last = first
    }

    func append(_ table: TOMLTableNode) {
        tables.append(table)
        last = table
    }
}

/// Where keys and headers put their tables and values, enforcing the rules above.
extension TOMLParser {
    /// Stores `value` under the dotted `key` inside `table`.
    mutating func insert(_ value: TOMLValue, at key: [KeySegment], into table: TOMLTableNode) throws(TOMLError) {
        var node = table
        for segment in key.dropLast() {
            node = try descendForDottedKey(node, segment)
        }
        guard let last = key.last else { return }
        if let first = node.addIfAbsent(.value(value), forKey: last.name, at: last.position) {
            throw scanner.error("duplicate key \(node.childPath(last.name)): already defined at \(first)", at: last.offset)
        }
    }

    /// The table a dotted key's inner segment names, created if need be.
    private mutating func descendForDottedKey(
        _ node: TOMLTableNode, _ segment: KeySegment
    ) throws(TOMLError) -> TOMLTableNode {
        guard let entry = node[segment.name] else {
            return node.addTable(segment.name, origin: .dotted, at: segment.position)
        }
        let path = { node.childPath(segment.name) }
        switch entry.slot {
        case .table(let child):
            switch child.origin {
            case .dotted:
                return child
            case .implicit:
                child.origin = .dotted
                child.definedAt = segment.position
                return child
            case .header, .root, .inline:
                throw scanner.error(
                    "cannot add to the table \(path()) with dotted keys: its [\(path())] header at \(child.definedAt ?? entry.position) defines it",
                    at: segment.offset)
            }
        case .arrayOfTables:
            throw scanner.error(
                "cannot add to \(path()) with dotted keys: it is an array of tables ([[\(path())]] at \(entry.position))",
                at: segment.offset)
        case .value(let value):
            throw scanner.error(notATable(path(), value, entry.position), at: segment.offset)
        }
    }

    /// The table a header's inner segment names: a table, or the last
    /// table of an array of tables; created implicitly if need be.
    private mutating func descendForHeader(
        _ node: TOMLTableNode, _ segment: KeySegment
    ) throws(TOMLError) -> TOMLTableNode {
        guard let entry = node[segment.name] else {
            return node.addTable(segment.name, origin: .implicit, at: segment.position)
        }
        switch entry.slot {
        case .table(let child):
            return child
        case .arrayOfTables(let array):
            return array.last
        case .value(let value):
            throw scanner.error(notATable(node.childPath(segment.name), value, entry.position), at: segment.offset)
        }
    }

    /// `[key]`: defines the table and returns it.
    mutating func defineTable(_ key: [KeySegment]) throws(TOMLError) -> TOMLTableNode {
        var node = root
        for segment in key.dropLast() { node = try descendForHeader(node, segment) }
        guard let last = key.last else { return node }
        let path = node.childPath(last.name)
        guard let entry = node[last.name] else {
            return node.addTable(last.name, origin: .header, at: last.position)
        }
        switch entry.slot {
        case .table(let child):
            switch child.origin {
            case .implicit:
                child.origin = .header
                child.definedAt = last.position
                return child
            case .header, .root, .inline:
                throw scanner.error(
                    "the table [\(path)] is defined twice (first at \(child.definedAt ?? entry.position))", at: last.offset)
            case .dotted:
                throw scanner.error(
                    "the table [\(path)] was already defined by dotted keys at \(child.definedAt ?? entry.position)",
                    at: last.offset)
            }
        case .arrayOfTables:
            throw scanner.error(
                "\(path) is an array of tables ([[\(path)]] at \(entry.position)); [\(path)] cannot define it as a table",
                at: last.offset)
        case .value(let value):
            throw scanner.error(notATable(path, value, entry.position), at: last.offset)
        }
    }

    /// `[[key]]`: appends a new table to the array of tables and returns it.
    mutating func appendArrayTable(_ key: [KeySegment]) throws(TOMLError) -> TOMLTableNode {
        var node = root
        for segment in key.dropLast() { node = try descendForHeader(node, segment) }
        guard let last = key.last else { return node }
        let path = node.childPath(last.name)
        let element = TOMLTableNode(origin: .header, path: path, definedAt: last.position)
        guard let entry = node[last.name] else {
            node.addIfAbsent(.arrayOfTables(TOMLTableArrayNode(element)), forKey: last.name, at: last.position)
            return element
        }
        switch entry.slot {
        case .arrayOfTables(let array):
            array.append(element)
            return element
        case .table(let child):
            throw scanner.error(
                "[[\(path)]] cannot make \(path) an array of tables: it is a table (defined at \(child.definedAt ?? entry.position))",
                at: last.offset)
        case .value(.array):
            throw scanner.error(
                "[[\(path)]] cannot append to \(path): it is a static array (defined with = at \(entry.position))",
                at: last.offset)
        case .value(let value):
            throw scanner.error(notATable(path, value, entry.position), at: last.offset)
        }
    }

    /// Why a key that holds a finished value cannot be used as a table.
    private func notATable(_ path: String, _ value: TOMLValue, _ position: TOMLPosition) -> String {
        switch value {
        case .table: "\(path) is an inline table (defined at \(position)), which cannot be extended"
        case .array: "\(path) is a static array (defined at \(position)), not a table"
        default: "\(path) is already \(value.kind) (defined at \(position)), not a table"
        }
    }
}
