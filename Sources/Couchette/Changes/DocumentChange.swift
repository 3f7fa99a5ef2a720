import Foundation

/// One committed change to a document.
public struct DocumentChange: Sendable {
    /// The database.
    public let database: Database
    /// The collection.
    public let collection: Collection
    /// The document's ID.
    public let documentID: String
    /// The revision the change made or inserted; empty for a purge.
    public let revisionID: String
    /// The document's sequence after the change.
    public let sequence: UInt64
    /// Whether the revision is a deletion (or the document was purged).
    public let isDeletion: Bool
    /// Whether the revision is now the document's current one.
    public let isCurrentRevision: Bool
    /// Whether the document has conflicting revisions after the change.
    public let inConflict: Bool
    /// The remote the revision was pulled from, nil for a local change.
    public let source: URL?
}

/// The changes one commit made to a collection.
public struct CollectionChange: Sendable {
    /// The collection.
    public let collection: Collection
    /// The IDs of the changed documents, in the order they changed.
    public let documentIDs: [String]
    /// The changes, one per saved revision.
    public let changes: [DocumentChange]
    /// Whether a replicator (or another `Database` instance) made them.
    public let isExternal: Bool

    init(collection: Collection, changes: [DocumentChange], isExternal: Bool) {
        self.collection = collection
        self.changes = changes
        self.isExternal = isExternal
        var seen: Set<String> = []
        documentIDs = changes.map(\.documentID).filter { seen.insert($0).inserted }
    }
}
