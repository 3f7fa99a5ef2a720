import CouchetteCore
import Foundation

/// Revision access by document ID (the 1.x API the tutorial's conflict lessons use); works for deleted
/// documents too.
extension Collection {
    private func record(_ documentID: String, in storage: DatabaseStorage) throws -> DocumentRecord? {
        try storage.document(collectionID: id, id: documentID, withTree: true)
    }

    private func saved(_ node: CouchetteCore.RevisionTree.Node, of record: DocumentRecord) -> SavedRevision {
        SavedRevision(
            collection: self, documentID: record.documentID, node: node,
            sequence: node.id.description == record.revisionID ? record.sequence : 0)
    }

    /// The document's revision tree, or nil when the document does not exist.
    public func revisionTree(documentID: String) throws -> RevisionTree? {
        try read { storage in try record(documentID, in: storage) }.map { record in
            RevisionTree(documentID: documentID, tree: record.tree!)
        }
    }

    /// The winning revision, which may be a tombstone; nil when the document does not exist.
    public func currentRevision(documentID: String) throws -> SavedRevision? {
        try read { storage in
            guard let record = try record(documentID, in: storage), let winner = record.tree!.winner else { return nil }
            return saved(winner, of: record)
        }
    }

    /// A revision by ID, or nil.
    ///
    /// - Throws: `.badInput` for a malformed revision ID.
    public func revision(documentID: String, revisionID: String) throws -> SavedRevision? {
        let revision: RevisionID
        do { revision = try RevisionID(parsing: revisionID) } catch { throw CouchetteError.wrap(error) }
        return try read { storage in
            guard let record = try record(documentID, in: storage), let node = record.tree![revision] else { return nil }
            return saved(node, of: record)
        }
    }

    /// Every leaf revision, deleted ones included, winner first.
    public func leafRevisions(documentID: String) throws -> [SavedRevision] {
        try read { storage in
            guard let record = try record(documentID, in: storage) else { return [] }
            return record.tree!.leaves.map { saved($0, of: record) }
        }
    }

    /// The live leaf revisions, winner first; more than one means the document is in conflict.
    public func conflictingRevisions(documentID: String) throws -> [SavedRevision] {
        try leafRevisions(documentID: documentID).filter { !$0.isDeletion }
    }

    /// The history of a revision, root (as far as kept) first.
    func history(documentID: String, revision: RevisionID) throws -> [SavedRevision] {
        try read { storage in
            guard let record = try record(documentID, in: storage) else { return [] }
            let tree = record.tree!
            return tree.history(of: revision).reversed().compactMap { tree[$0] }.map { saved($0, of: record) }
        }
    }

    /// Saves properties as a new revision of the current one (1.x `putProperties`). A `_rev` must name the
    /// current revision; without one the document must not exist (or be deleted). A generated ID is used when
    /// `documentID` is nil and the properties have no `_id`.
    ///
    /// - Throws: `.conflict` (409) when `_rev` is stale or missing for an existing document.
    public func putProperties(_ properties: [String: Any], documentID: String? = nil) throws -> SavedRevision {
        let id = documentID ?? (properties["_id"] as? String) ?? MutableDocument.generateID()
        let parent = properties["_rev"] as? String
        return try saveRevision(
            properties, documentID: id, parentRevisionID: parent, isDeletion: (properties["_deleted"] as? Bool) ?? false,
            requireCurrent: true)
    }

    /// Saves a revision with an explicit parent.
    ///
    /// - Parameters:
    ///   - parentRevisionID: The parent; nil for a new document (or one whose current revision is deleted).
    ///   - isDeletion: Save a tombstone.
    ///   - allowConflict: Allow any existing parent, adding a branch (a conflict); otherwise the parent must
    ///     be a leaf.
    /// - Throws: `.conflict` (409) when the parent is not a leaf (without `allowConflict`) or unknown,
    ///   `.badInput` for bad IDs or values.
    public func saveRevision(
        _ properties: [String: Any], documentID: String, parentRevisionID: String?, isDeletion: Bool = false,
        allowConflict: Bool = false
    ) throws -> SavedRevision {
        try saveRevision(
            properties, documentID: documentID, parentRevisionID: parentRevisionID, isDeletion: isDeletion,
            allowConflict: allowConflict, requireCurrent: false)
    }

    func saveRevision(
        _ properties: [String: Any], documentID: String, parentRevisionID: String?, isDeletion: Bool = false,
        allowConflict: Bool = false, requireCurrent: Bool
    ) throws -> SavedRevision {
        try DatabaseNames.validateDocumentID(documentID)
        let parent: RevisionID?
        do { parent = try parentRevisionID.map { text throws(CoreError) in try RevisionID(parsing: text) } } catch {
            throw CouchetteError.wrap(error)
        }
        return try modify { edit in
            let existing = try record(documentID, in: edit.storage)
            let tree = existing?.tree ?? CouchetteCore.RevisionTree()
            if requireCurrent, !allowConflict, let winner = tree.winner {
                let isCurrent = parent == winner.id || (parent == nil && winner.isDeleted)
                guard isCurrent else {
                    throw CouchetteError(.conflict, message: "Document update conflict: the parent is not the current revision")
                }
            }
            let generation = LocalEdit.nextGeneration(tree: tree, parent: parent, allowConflict: allowConflict)
            let body = isDeletion ? JSONValue.object([:]) : try edit.body(from: properties, generation: generation)
            let (revision, record) = try edit.commit(
                documentID: documentID, existing: existing, tree: tree, parent: parent, body: body, deleted: isDeletion,
                allowConflict: allowConflict)
            return saved(record.tree![revision]!, of: record)
        }
    }

    /// Inserts a revision made elsewhere with its history, keeping its ID (what the replicator calls).
    ///
    /// - Parameters:
    ///   - properties: The body; `_deleted: true` marks a tombstone; `_attachments` entries may carry inline
    ///     `data` or be stubs of content already stored.
    ///   - revisionHistory: Revision IDs newest first, starting with the revision itself.
    ///   - attachments: Attachment bodies by name, for entries marked `follows`.
    ///   - source: The remote it came from (makes the change external).
    /// - Returns: false when the revision was already present.
    /// - Throws: `.badInput` for malformed IDs, a history with a gap anywhere but where it joins the document's
    ///   revisions (``CouchetteCore/RevisionTree/insert(_:body:deleted:history:)``), or bad attachments.
    @discardableResult
    public func putExistingRevision(
        documentID: String, properties: [String: Any], revisionHistory: [String], attachments: [String: Blob] = [:],
        source: URL? = nil
    ) throws -> Bool {
        try DatabaseNames.validateDocumentID(documentID)
        let history: [RevisionID]
        do {
            // Its generations are checked against the document's tree (a gap is allowed only where the history joins it).
            history = try revisionHistory.map { text throws(CoreError) in try RevisionID(parsing: text) }
        } catch {
            throw CouchetteError.wrap(error)
        }
        guard let revision = history.first else {
            throw CouchetteError(.badInput, message: "The revision history is empty")
        }
        let deleted = (properties["_deleted"] as? Bool) ?? false
        // A first revision of JSON values (a pull's usual case) is serialized before the lock and inserted unless the
        // document exists; anything else, or an existing document, takes the general way.
        if !deleted, attachments.isEmpty, history.count == 1, let body = Self.plainFirstRevisionBody(properties) {
            let new = LocalEdit.NewDocument(revision: revision, body: body)
            if try modify({ edit in try edit.insert(new, documentID: documentID, source: source) }) != nil { return true }
        }
        var merged = properties
        if !attachments.isEmpty {
            var entries = merged["_attachments"] as? [String: Any] ?? [:]
            for (name, blob) in attachments { entries[name] = blob }
            merged["_attachments"] = entries
        }
        return try modify { edit in
            let existing = try record(documentID, in: edit.storage)
            var tree = existing?.tree ?? CouchetteCore.RevisionTree()
            if tree.contains(revision), tree[revision]?.body != nil { return false }
            let body = try edit.body(from: merged, generation: revision.generation)
            do {
                try tree.insert(revision, body: body, deleted: deleted, history: history)
            } catch {
                throw CouchetteError.wrap(error)
            }
            _ = try edit.store(documentID: documentID, existing: existing, tree: tree, changed: revision, source: source)
            return true
        }
    }

    /// The stored text of a replicated revision's properties when they are all ``CouchetteCore/JSONValue``s with no
    /// attachments and no blob: what ``LocalEdit/body(from:generation:)`` and the general store would write (metadata
    /// keys dropped). Nil for anything else, including a reserved name, which the general way refuses.
    static func plainFirstRevisionBody(_ properties: [String: Any]) -> [UInt8]? {
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(properties.count)
        for (key, value) in properties {
            if key.utf8.first == UInt8(ascii: "_") {
                guard LocalEdit.metadataKeys.contains(key) else { return nil }
                continue
            }
            guard let json = value as? JSONValue else { return nil }
            members[key] = json
        }
        let body = JSONValue.object(members)
        return DocumentValues.containsBlobs(body) ? nil : body.serialized()
    }

    /// Which of the given revisions are missing here, by document ID (only documents with missing revisions
    /// are in the result).
    public func revsDiff(_ revisions: [String: [String]]) throws -> [String: [String]] {
        try missingRevisions(revisions).mapValues(\.missing)
    }

    /// ``revsDiff(_:)`` with the leaves that may be ancestors of the missing revisions (malformed IDs count as
    /// missing).
    func missingRevisions(_ revisions: [String: [String]]) throws -> [String: MissingRevisions] {
        try read { storage in
            var missing: [String: MissingRevisions] = [:]
            for (documentID, revisionIDs) in revisions {
                let tree = try record(documentID, in: storage)?.tree ?? CouchetteCore.RevisionTree()
                let diff = tree.revsDiff(revisionIDs.compactMap { try? RevisionID(parsing: $0) })
                let malformed = revisionIDs.filter { (try? RevisionID(parsing: $0)) == nil }
                let absent = diff.missing.map(\.description) + malformed
                guard !absent.isEmpty else { continue }
                missing[documentID] = MissingRevisions(
                    missing: absent, possibleAncestors: diff.possibleAncestors.map(\.description))
            }
            return missing
        }
    }

    /// Revisions with their histories (newest first), read in one transaction; those not stored with a body (and
    /// not tombstones) are left out. For a revision holding blobs, the bodies its ancestors still keep come too (by
    /// revision ID), to tell since when each blob is there.
    func revisionsWithHistory(_ wanted: [WantedRevision]) throws
        -> [(revision: SavedRevision, history: [String], ancestorBodies: [String: JSONValue])]
    {
        try read { storage in
            var found: [(revision: SavedRevision, history: [String], ancestorBodies: [String: JSONValue])] = []
            var records: [String: DocumentRecord] = [:]
            for item in wanted {
                guard let revision = try? RevisionID(parsing: item.revisionID) else { continue }
                if records[item.documentID] == nil {
                    guard let record = try record(item.documentID, in: storage) else { continue }
                    records[item.documentID] = record
                }
                guard let record = records[item.documentID], let tree = record.tree, let node = tree[revision],
                    node.body != nil || node.isDeleted
                else { continue }
                let history = tree.history(of: revision)
                var ancestorBodies: [String: JSONValue] = [:]
                if let body = node.body, DocumentValues.containsBlobs(body) {
                    for ancestor in history.dropFirst() {
                        guard let ancestorBody = tree[ancestor]?.body else { break }
                        ancestorBodies[ancestor.description] = ancestorBody
                    }
                }
                found.append((saved(node, of: record), history.map(\.description), ancestorBodies))
            }
            return found
        }
    }

    /// The documents changed after `sequence`, oldest first: one change per document (its current revision),
    /// or one per leaf with `includeConflicts`.
    public func changes(since sequence: UInt64, limit: Int? = nil, includeConflicts: Bool = false) throws
        -> [DocumentChange]
    {
        try read { storage in
            let records = try storage.documents(
                collectionID: id, since: sequence, limit: limit, withLeaves: includeConflicts)
            var changes: [DocumentChange] = []
            for (record, otherLeaves) in records {
                changes.append(
                    DocumentChange(
                        database: database, collection: self, documentID: record.documentID,
                        revisionID: record.revisionID, sequence: record.sequence, isDeletion: record.isDeleted,
                        isCurrentRevision: true, inConflict: record.flags.contains(.conflicted), source: nil))
                for leaf in otherLeaves {
                    changes.append(
                        DocumentChange(
                            database: database, collection: self, documentID: record.documentID,
                            revisionID: leaf.revisionID, sequence: record.sequence, isDeletion: leaf.isDeleted,
                            isCurrentRevision: false, inConflict: true, source: nil))
                }
            }
            return changes
        }
    }
}
