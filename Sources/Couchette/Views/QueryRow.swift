import CouchetteCore
import Foundation

/// One row of a view or all-documents query (Couchbase Lite 1.x's `CBLQueryRow`). Document fields are nil for
/// reduced rows; ``conflictingRevisions`` is set in the `showConflicts` and `onlyConflicts` all-docs modes.
public final class QueryRow: Sendable, CustomStringConvertible {
    /// The row's key as JSON.
    public let keyJSON: JSONValue
    /// The row's value as JSON (`null` when none was emitted).
    public let valueJSON: JSONValue
    /// The document that emitted the row; nil for a reduced row.
    public let sourceDocumentID: String?
    /// The sequence of that document's revision.
    public let sequenceNumber: UInt64
    /// The revision of the source document (all-docs rows, and view rows with `includeDocs`).
    public let documentRevisionID: String?
    /// The conflicting revisions, winner first (all-docs `showConflicts`/`onlyConflicts`, conflicted documents).
    public let conflictingRevisions: [SavedRevision]?
    private let collection: Collection?
    private let properties: JSONValue?

    init(
        key: JSONValue, value: JSONValue, sourceDocumentID: String?, sequence: UInt64, revisionID: String? = nil,
        properties: JSONValue? = nil, conflictingRevisions: [SavedRevision]? = nil, collection: Collection?
    ) {
        keyJSON = key
        valueJSON = value
        self.sourceDocumentID = sourceDocumentID
        sequenceNumber = sequence
        documentRevisionID = revisionID
        self.properties = properties
        self.conflictingRevisions = conflictingRevisions
        self.collection = collection
    }

    /// The key, as a Foundation value (`String`, number, `Bool`, `[Any]`, `[String: Any]`, or `NSNull`).
    public var key: Any? { keyJSON.isNull ? nil : DocumentValues.value(from: keyJSON) }

    /// The value, as a Foundation value; nil when the row has none.
    public var value: Any? { valueJSON.isNull ? nil : DocumentValues.value(from: valueJSON) }

    /// Element `index` of an array key, or nil.
    public func key(at index: Int) -> Any? {
        keyJSON[index].map(DocumentValues.value(from:))
    }

    /// The ID of the document the row describes: the value's `"_id"` when the map emitted a linked document's ID
    /// that way, else the source document.
    public var documentID: String? {
        if case .object(let members) = valueJSON, let linked = members["_id"]?.stringValue { return linked }
        return sourceDocumentID
    }

    /// The document the row describes (read now), or nil for a reduced row or a deleted document.
    public var document: Document? {
        guard let collection, let documentID else { return nil }
        return try? collection.document(id: documentID)
    }

    /// The document's properties, with `_id` and `_rev`: read with the row when the query had `includeDocs`, else
    /// read now.
    public var documentProperties: [String: Any]? {
        if case .object(let members)? = properties { return members.mapValues(DocumentValues.value(from:)) }
        return document?.properties
    }

    public var description: String {
        "QueryRow(key: \(keyJSON.serializedString()), value: \(valueJSON.serializedString()), doc: \(documentID ?? "-"))"
    }
}

/// The rows of one query run, and the sequence they reflect (Couchbase Lite 1.x's `CBLQueryEnumerator`).
public final class QueryEnumerator: Sequence, @unchecked Sendable {
    /// Every row, in order.
    public let allRows: [QueryRow]
    /// The collection's last sequence when the rows were read.
    public let sequenceNumber: UInt64
    /// Whether the index was behind the collection when the rows were read (`indexUpdateMode` `.never` or `.after`).
    public let isStale: Bool
    private let lock = NSLock()
    private var position = 0

    init(rows: [QueryRow], sequenceNumber: UInt64, isStale: Bool) {
        allRows = rows
        self.sequenceNumber = sequenceNumber
        self.isStale = isStale
    }

    /// The number of rows.
    public var count: Int { allRows.count }

    /// The next row of the enumerator's own cursor, or nil after the last (``reset()`` rewinds).
    public func nextRow() -> QueryRow? {
        lock.withLock {
            guard position < allRows.count else { return nil }
            defer { position += 1 }
            return allRows[position]
        }
    }

    /// Row `index`.
    public func row(at index: Int) -> QueryRow { allRows[index] }

    /// Rewinds ``nextRow()``.
    public func reset() { lock.withLock { position = 0 } }

    /// Iterates over every row (independently of ``nextRow()``).
    public func makeIterator() -> IndexingIterator<[QueryRow]> { allRows.makeIterator() }

    /// The same rows with a cursor of their own, for one listener or stream: another's ``nextRow()`` does not move it.
    func withOwnCursor() -> QueryEnumerator {
        QueryEnumerator(rows: allRows, sequenceNumber: sequenceNumber, isStale: isStale)
    }

    /// Whether two enumerators hold the same rows (keys, values, documents and revisions).
    func hasSameRows(as other: QueryEnumerator) -> Bool {
        allRows.count == other.allRows.count
            && zip(allRows, other.allRows).allSatisfy { left, right in
                left.keyJSON == right.keyJSON && left.valueJSON == right.valueJSON
                    && left.sourceDocumentID == right.sourceDocumentID
                    && left.documentRevisionID == right.documentRevisionID
                    && left.sequenceNumber == right.sequenceNumber
                    && left.conflictingRevisions?.map(\.revisionID) == right.conflictingRevisions?.map(\.revisionID)
            }
    }
}
