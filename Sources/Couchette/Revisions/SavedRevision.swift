import CouchetteCore
import Foundation

/// A revision in a document's tree (Couchbase Lite 1.x `CBLSavedRevision`); ``properties`` is nil once
/// compaction has removed the body.
///
/// ```swift
/// let revisions = try lists.conflictingRevisions(documentID: id)
/// let merged = revisions[0].createRevision()
/// merged.userProperties = ["type": "task-list", "name": "Merged"]
/// _ = try merged.save()
/// ```
public final class SavedRevision: Revision, Sendable, Hashable, CustomStringConvertible {
    /// The collection holding the document.
    public let collection: Collection
    public let documentID: String
    let id: RevisionID
    public let parentRevisionID: String?
    public let isDeletion: Bool
    /// The document's sequence when this is its current revision; 0 for other revisions.
    public let sequence: UInt64
    let body: JSONValue?

    init(collection: Collection, documentID: String, node: CouchetteCore.RevisionTree.Node, sequence: UInt64) {
        self.collection = collection
        self.documentID = documentID
        self.id = node.id
        self.parentRevisionID = node.parent?.description
        self.isDeletion = node.isDeleted
        self.sequence = sequence
        self.body = node.body
    }

    public var revisionID: String? { id.description }

    /// Whether this is a tombstone or a revision removed from the reader's channels.
    public var isGone: Bool { isDeletion || body?["_removed"] == .bool(true) }

    /// Whether the body is still stored.
    public var propertiesAvailable: Bool { body != nil }

    public var properties: [String: Any]? {
        body.map {
            RevisionProperties.properties(documentID: documentID, revisionID: id.description, deleted: isDeletion, body: $0)
        }
    }

    public func attachment(named name: String) -> Blob? {
        guard let metadata = properties?["_attachments"] as? [String: Any], let entry = metadata[name] as? [String: Any]
        else { return nil }
        var blobProperties: [String: Any] = ["@type": "blob"]
        blobProperties["content_type"] = entry["content_type"]
        blobProperties["digest"] = entry["digest"]
        blobProperties["length"] = entry["length"]
        return try? Blob(properties: blobProperties, store: collection.database.currentBlobStore)
    }

    /// The revision as a document snapshot, or nil when its body is gone or it is a deletion.
    public func toDocument() -> Document? {
        guard let body, !isDeletion else { return nil }
        return Document(
            id: documentID, revisionID: id.description, sequence: sequence, collection: collection,
            body: body.objectValue ?? [:])
    }

    /// The parent revision, or nil for a root.
    public func parentRevision() throws -> SavedRevision? {
        guard let parentRevisionID else { return nil }
        return try collection.revision(documentID: documentID, revisionID: parentRevisionID)
    }

    /// The revisions from the root (as far as kept) to this one.
    public func history() throws -> [SavedRevision] {
        try collection.history(documentID: documentID, revision: id)
    }

    /// An unsaved child revision that starts with a copy of this body.
    public func createRevision() -> UnsavedRevision {
        UnsavedRevision(collection: collection, documentID: documentID, parent: self, properties: properties ?? [:])
    }

    /// Saves a child revision with these properties (409 unless this is the current revision).
    public func createRevision(properties: [String: Any]) throws -> SavedRevision {
        try collection.saveRevision(
            properties, documentID: documentID, parentRevisionID: id.description, requireCurrent: true)
    }

    /// Saves a deletion as a child of this revision.
    public func deleteDocument() throws -> SavedRevision {
        try collection.saveRevision(
            [:], documentID: documentID, parentRevisionID: id.description, isDeletion: true, requireCurrent: true)
    }

    public var description: String { "SavedRevision(\(documentID) \(id))" }

    public static func == (lhs: SavedRevision, rhs: SavedRevision) -> Bool {
        lhs.documentID == rhs.documentID && lhs.id == rhs.id && lhs.collection == rhs.collection
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(documentID)
        hasher.combine(id)
    }
}
