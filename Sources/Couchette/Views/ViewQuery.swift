import CouchetteCore
import Foundation

/// Options for a view or all-documents query (Couchbase Lite 1.x's `CBLQuery`): a value, run any number of times.
///
/// ```swift
/// var query = incompleteCounts.createQuery()
/// query.groupLevel = 1                      // one row per list: (list ID, count)
/// for row in try query.run() { print(row.key ?? "", row.value ?? 0) }
///
/// var conflicts = try db.createAllDocumentsQuery()
/// conflicts.allDocsMode = .onlyConflicts
/// ```
///
/// Keys (`startKey`, `endKey`, `keys`) are kept as JSON; a value that is not JSON makes ``run()`` throw `.badInput`.
public struct ViewQuery: Sendable {
    /// What a query reads.
    enum Source: Sendable {
        case view(MapReduceView)
        case allDocuments(Collection)
    }

    let source: Source

    /// The most rows to return (after grouping and `skip`).
    public var limit = Int.max
    /// Rows to leave out at the start.
    public var skip = 0
    /// Rows in descending key order; `startKey` is then the high end.
    public var descending = false
    /// Map rows only: the reduce block is not applied (CouchDB's `reduce=false`).
    public var mapOnly = false
    /// Read each row's document properties with the rows (``QueryRow/documentProperties``).
    public var includeDocs = false
    /// Among rows whose key equals `startKey`, the first document ID to return.
    public var startKeyDocID: String?
    /// The last document ID among rows whose key equals `endKey`.
    public var endKeyDocID: String?
    /// Whether the row with `startKey` is included.
    public var inclusiveStart = true
    /// Whether the row with `endKey` is included.
    public var inclusiveEnd = true
    /// Nonzero: `endKey` matches as a prefix — a string any key starting with it, an array any array starting with
    /// its elements; 2 takes an array's last element as a prefix.
    public var prefixMatchLevel = 0
    /// Nonzero: rows are grouped by their first `groupLevel` array elements (a whole key when it is not an array),
    /// each group reduced to one row. Zero reduces every row into one.
    public var groupLevel = 0
    /// Which documents an all-documents query returns.
    public var allDocsMode = AllDocsMode.allDocs
    /// When a view query brings its index up to date.
    public var indexUpdateMode = IndexUpdateMode.before
    /// Rows for which this returns false are left out (before `skip` and `limit`).
    public var postFilter: (@Sendable (QueryRow) -> Bool)?

    private var storedStartKey: JSONValue?
    private var storedEndKey: JSONValue?
    private var storedKeys: [JSONValue]?
    private var invalidOption: String?

    init(source: Source) {
        self.source = source
    }

    /// The first key (the last when `descending`); nil for no bound.
    public var startKey: Any? {
        get { storedStartKey.map(DocumentValues.value(from:)) }
        set { storedStartKey = json(newValue, option: "startKey") }
    }

    /// The last key (the first when `descending`); nil for no bound.
    public var endKey: Any? {
        get { storedEndKey.map(DocumentValues.value(from:)) }
        set { storedEndKey = json(newValue, option: "endKey") }
    }

    /// Exactly these keys, in this order (`startKey` and `endKey` are then ignored).
    public var keys: [Any]? {
        get { storedKeys?.map(DocumentValues.value(from:)) }
        set { storedKeys = newValue.map { $0.map { json($0, option: "keys") ?? .null } } }
    }

    private mutating func json(_ value: Any?, option: String) -> JSONValue? {
        guard let value else { return nil }
        do {
            return try DocumentValues.json(from: value, path: option) { _ in }
        } catch {
            invalidOption = "\(error)"
            return nil
        }
    }

    /// The options as JSON, checked.
    func checkedKeys() throws -> (start: JSONValue?, end: JSONValue?, keys: [JSONValue]?) {
        if let invalidOption { throw CouchetteError(.badInput, message: "Invalid query option: \(invalidOption)") }
        guard limit >= 0, skip >= 0, groupLevel >= 0, prefixMatchLevel >= 0 else {
            throw CouchetteError(.badInput, message: "limit, skip, groupLevel and prefixMatchLevel must not be negative")
        }
        return (storedStartKey, storedEndKey, storedKeys)
    }

    // MARK: - Running

    /// Runs the query.
    ///
    /// - Throws: `.badInput` for an invalid option or a view without a map block; `.notOpen` once the database is
    ///   closed.
    public func run() throws -> QueryEnumerator {
        try ViewQueryRunner(query: self).run()
    }

    /// ``run()`` off the calling task.
    public func runAsync() async throws -> QueryEnumerator {
        try await Task.detached { try self.run() }.value
    }

    /// A live query: the rows now, then again after each change to the collection that changes them.
    public func asLive() -> LiveQuery {
        LiveQuery(query: self)
    }

    /// The current rows, then new rows each time a change to the collection changes them; ends when the database
    /// closes or the iterating task is cancelled.
    public func changes() -> AsyncThrowingStream<QueryEnumerator, any Error> {
        asLive().changes(startingNow: true)
    }

    /// The collection the query reads.
    var collection: Collection {
        switch source {
        case .view(let view): view.collection
        case .allDocuments(let collection): collection
        }
    }
}
