import Foundation

/// 1.x conveniences on a snapshot; ``currentRevision`` is the revision the snapshot shows.
extension Document {
    /// The properties with `_id` and `_rev` (1.x `properties`).
    public var properties: [String: Any] {
        RevisionProperties.properties(documentID: id, revisionID: revisionID, deleted: false, body: toJSONValue())
    }

    /// The properties without `_` keys.
    public var userProperties: [String: Any] { toDictionary().filter { !$0.key.hasPrefix("_") } }

    /// The revision this snapshot shows.
    public var currentRevision: SavedRevision? {
        guard let revisionID, let collection else { return nil }
        return try? collection.revision(documentID: id, revisionID: revisionID)
    }

    private func requireCollection() throws -> Collection {
        guard let collection else { throw CouchetteError(.notFound, message: "Document \"\(id)\" has not been saved") }
        return collection
    }

    /// A revision of this document by ID.
    public func revision(withID revisionID: String) throws -> SavedRevision? {
        try requireCollection().revision(documentID: id, revisionID: revisionID)
    }

    /// The history of the current revision, root first.
    public func revisionHistory() throws -> [SavedRevision] {
        try currentRevision?.history() ?? []
    }

    /// The leaf revisions, winner first.
    public func leafRevisions() throws -> [SavedRevision] { try requireCollection().leafRevisions(documentID: id) }

    /// The live leaf revisions, winner first.
    public func conflictingRevisions() throws -> [SavedRevision] {
        try requireCollection().conflictingRevisions(documentID: id)
    }

    /// A new unsaved revision on top of the current one.
    public func newRevision() -> UnsavedRevision {
        if let current = currentRevision { return current.createRevision() }
        return UnsavedRevision(collection: collection!, documentID: id, parent: nil, properties: [:])
    }

    /// Saves properties as a child of this snapshot's revision (409 if the document changed since).
    public func putProperties(_ properties: [String: Any]) throws -> SavedRevision {
        var properties = properties
        properties["_rev"] = revisionID
        return try requireCollection().putProperties(properties, documentID: id)
    }

    /// Applies `block` to a new revision of the current one and saves it, retrying with a fresh revision
    /// when another save got there first (409).
    ///
    /// - Parameter block: Edits the revision; return false to cancel.
    /// - Returns: The saved revision, or nil when cancelled.
    @discardableResult
    public func update(_ block: (UnsavedRevision) throws -> Bool) throws -> SavedRevision? {
        let collection = try requireCollection()
        while true {
            guard let current = try collection.currentRevision(documentID: id) else {
                throw CouchetteError(.notFound, message: "Document \"\(id)\" does not exist")
            }
            let revision = current.createRevision()
            guard try block(revision) else { return nil }
            do {
                return try revision.save()
            } catch CouchetteError.Code.conflict {
                continue
            }
        }
    }
}
