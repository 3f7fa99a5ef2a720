import CouchetteCore
import Foundation

/// A persistent map/reduce index over one collection (Couchbase Lite 1.x's `CBLView`): the map block emits rows from
/// each document, the index keeps them sorted by key in CouchDB collation order, and queries read key ranges, group
/// rows and reduce them. The index is stored in the database file and brought up to date incrementally — only
/// documents changed since the last update are mapped again.
///
/// ```swift
/// let byName = try db.view(named: "list/listsByName")
/// byName.setMapBlock({ doc, emit in
///     if doc["type"] as? String == "task-list", let name = doc["name"] { emit(name, nil) }
/// }, version: "1.0")
/// for row in try byName.createQuery().run() { print(row.key ?? "", row.documentID ?? "") }
/// ```
///
/// Map and reduce blocks live in memory: set them each time the app starts (a new `version` rebuilds the index).
public final class MapReduceView: @unchecked Sendable, CustomStringConvertible {
    /// The view's name, unique in its collection.
    public let name: String
    /// The collection it indexes.
    public let collection: Collection

    private let lock = NSLock()
    private var map: MapBlock?
    private var reduce: ReduceBlock?
    private var version: String?
    private var type: String?

    init(name: String, collection: Collection) {
        self.name = name
        self.collection = collection
    }

    /// The map block, once set.
    public var mapBlock: MapBlock? { lock.withLock { map } }

    /// The reduce block, if any.
    public var reduceBlock: ReduceBlock? { lock.withLock { reduce } }

    /// The version given with the map block.
    public var mapVersion: String? { lock.withLock { version } }

    /// When set, only documents whose `"type"` property equals it are mapped (set it before the first query; changing
    /// it later needs a new version).
    public var documentType: String? {
        get { lock.withLock { type } }
        set { lock.withLock { type = newValue } }
    }

    /// Sets the map block, an optional reduce block, and their version. A version other than the one the index was
    /// built with empties the index, which is rebuilt by the next update.
    ///
    /// - Returns: Whether the version differs from the index's (or from the previous call's).
    @discardableResult
    public func setMapBlock(_ map: @escaping MapBlock, reduce: ReduceBlock? = nil, version: String) -> Bool {
        let previous = lock.withLock { () -> String? in
            defer {
                self.map = map
                self.reduce = reduce
                self.version = version
            }
            return self.version
        }
        let stored = try? collection.read { storage in try storage.view(collectionID: collection.id, name: name) }
        return (stored?.version ?? previous) != version
    }

    // MARK: - The index

    /// Whether documents changed since the index was last updated.
    public var isStale: Bool {
        (try? collection.read { storage -> Bool in
            let indexed = try storage.view(collectionID: collection.id, name: name)?.lastSequence ?? 0
            return try collection.database.requireRow(collection).lastSequence > indexed
        }) ?? true
    }

    /// The last sequence the index reflects (0 before the first update).
    public var lastSequenceIndexed: UInt64 {
        (try? collection.read { storage in try storage.view(collectionID: collection.id, name: name)?.lastSequence }) ?? 0
    }

    /// The number of rows in the index (as of its last update).
    public var totalRows: Int {
        (try? collection.read { storage -> Int in
            guard let state = try storage.view(collectionID: collection.id, name: name) else { return 0 }
            return try storage.viewRowCount(viewID: state.id)
        }) ?? 0
    }

    /// Brings the index up to date: maps the documents changed since the last update, in one transaction.
    ///
    /// - Throws: `.badInput` when no map block is set; `.forbidden` for a read-only database; `.notOpen` once closed.
    public func updateIndex() throws {
        guard let (map, version, type) = lock.withLock({ self.map.map { ($0, self.version ?? "", self.type) } }) else {
            throw CouchetteError(.badInput, message: "View \"\(name)\" has no map block")
        }
        try ViewIndexer(view: self, map: map, version: version, documentType: type).run()
    }

    /// ``updateIndex()`` off the calling task.
    public func updateIndexAsync() async throws {
        try await Task.detached { try self.updateIndex() }.value
    }

    /// Empties the index (the next update rebuilds it).
    public func deleteIndex() throws {
        try collection.modify { edit in
            guard let state = try edit.storage.view(collectionID: collection.id, name: name) else { return }
            try edit.storage.clearView(id: state.id, forget: false)
        }
    }

    /// Deletes the index and forgets the view; ``Collection/view(named:)`` makes a new one.
    public func delete() throws {
        try collection.modify { edit in
            if let state = try edit.storage.view(collectionID: collection.id, name: name) {
                try edit.storage.clearView(id: state.id, forget: true)
            }
        }
        collection.database.forgetView(self)
        lock.withLock {
            map = nil
            reduce = nil
            version = nil
        }
    }

    /// A query over this view with default options.
    public func createQuery() -> ViewQuery {
        ViewQuery(source: .view(self))
    }

    public var description: String { "MapReduceView(\(collection.fullName)/\(name))" }

    // MARK: - Helpers for reduce blocks

    /// The sum of the numbers among `values` (others count as 0): a helper for reduce blocks.
    public static func totalValues(_ values: [Any]) -> Double {
        values.reduce(0) { $0 + (number($1) ?? 0) }
    }

    /// A value as a number, when it is one (not a Boolean).
    static func number(_ value: Any) -> Double? {
        switch value {
        case let number as Int: Double(number)
        case let number as Double: number
        case is Bool: nil
        case let number as Int64: Double(number)
        case let json as JSONValue: json.doubleValue
        case let number as NSNumber: number.doubleValue
        default: nil
        }
    }
}
