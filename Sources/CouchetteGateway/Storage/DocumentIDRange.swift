// MARK: - DocumentIDRange

/// The live documents an `_all_docs` page reads, by ID: CouchDB's `startkey`, `endkey`, `inclusive_end` and
/// `descending` (reading from `startkey` down to `endkey`).
///
/// ```swift
/// let range = DocumentIDRange(startKey: "b", endKey: "d", inclusiveEnd: false)
/// try storage.liveDocumentIDs(in: range, limit: 100)  // live IDs from "b" up to, not including, "d"
/// ```
public struct DocumentIDRange: Sendable, Equatable {
    /// Where the page begins (the highest ID when ``descending``); nil for the first.
    public var startKey: String?
    /// Where it ends (the lowest ID when ``descending``); nil for the last.
    public var endKey: String?
    /// Whether ``endKey`` itself is in the range.
    public var inclusiveEnd = true
    /// Whether the IDs come in descending order.
    public var descending = false

    public init(startKey: String? = nil, endKey: String? = nil, inclusiveEnd: Bool = true, descending: Bool = false) {
        self.startKey = startKey
        self.endKey = endKey
        self.inclusiveEnd = inclusiveEnd
        self.descending = descending
    }

    /// The lowest ID in the range (nil: none), and whether it is included.
    var lowerBound: (key: String, inclusive: Bool)? {
        descending ? endKey.map { ($0, inclusiveEnd) } : startKey.map { ($0, true) }
    }

    /// The highest ID in the range (nil: none), and whether it is included.
    var upperBound: (key: String, inclusive: Bool)? {
        descending ? startKey.map { ($0, true) } : endKey.map { ($0, inclusiveEnd) }
    }

    /// Whether `id` is in the range (the bounds compare IDs as their UTF-8 bytes, as both storages order them).
    public func contains(_ id: String) -> Bool {
        if let (key, inclusive) = lowerBound {
            guard inclusive ? !id.utf8.lexicographicallyPrecedes(key.utf8) : key.utf8.lexicographicallyPrecedes(id.utf8)
            else { return false }
        }
        if let (key, inclusive) = upperBound {
            guard inclusive ? !key.utf8.lexicographicallyPrecedes(id.utf8) : id.utf8.lexicographicallyPrecedes(key.utf8)
            else { return false }
        }
        return true
    }
}

// MARK: - SQL

extension DocumentIDRange {
    /// SQL conditions keeping `column` within the range, with a `?` placeholder for each bound, and the bounds in
    /// their order (SQLite).
    func conditions(on column: String) -> (conditions: [String], keys: [String]) {
        var conditions: [String] = []
        var keys: [String] = []
        if let (key, _) = lowerBound {
            conditions.append("\(column) \(lowerOperator) ?")
            keys.append(key)
        }
        if let (key, _) = upperBound {
            conditions.append("\(column) \(upperOperator) ?")
            keys.append(key)
        }
        return (conditions, keys)
    }

    /// The comparison keeping IDs above the lower bound: `>=`, or `>` when it is excluded.
    var lowerOperator: String { lowerBound?.inclusive == false ? ">" : ">=" }

    /// The comparison keeping IDs below the upper bound: `<=`, or `<` when it is excluded.
    var upperOperator: String { upperBound?.inclusive == false ? "<" : "<=" }

    /// The range's order as SQL says it.
    var sqlOrder: String { descending ? "DESC" : "ASC" }
}
