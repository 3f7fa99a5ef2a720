/// Emits one row from a map block: a key (any JSON value; rows sort by it in CouchDB collation order) and an optional
/// value. Valid only during the map call.
public typealias MapEmit = (_ key: Any, _ value: Any?) -> Void

/// A view's map function: called with each document's properties (including `_id` and `_rev`), it emits any number
/// of rows. It must be a pure function of the document: the index is updated incrementally, so the block is not
/// called again for documents that did not change.
public typealias MapBlock = @Sendable (_ doc: [String: Any], _ emit: MapEmit) -> Void

/// A view's reduce function: combines the keys and values of a group of rows into one value. `rereduce` is always
/// false here (groups are reduced from their rows each time).
public typealias ReduceBlock = @Sendable (_ keys: [Any], _ values: [Any], _ rereduce: Bool) -> Any

/// Which documents an all-documents query returns, and how.
public enum AllDocsMode: Sendable, Hashable {
    /// Documents that are not deleted, by ID.
    case allDocs
    /// Deleted documents too (their rows' values say `"deleted": true`).
    case includeDeleted
    /// Like ``allDocs``, with each conflicted document's ``QueryRow/conflictingRevisions``.
    case showConflicts
    /// Only documents in conflict (the tutorial's conflict detection), with their conflicting revisions.
    case onlyConflicts
    /// Documents that are not deleted, in sequence order; `startKey`/`endKey` are sequence numbers.
    case bySequence
}

/// When a view query brings the index up to date.
public enum IndexUpdateMode: Sendable, Hashable {
    /// Before running: the rows reflect every change (the default).
    case before
    /// Never: the rows are what the index holds (possibly stale).
    case never
    /// After running: the rows may be stale; the index is updated in the background for the next query.
    case after
}
