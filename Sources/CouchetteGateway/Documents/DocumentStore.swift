import CouchetteCore
import Foundation

/// The document operations of one gateway database, over its ``GatewayStorage``, usable without HTTP:
/// writes with and without new edits, reads of revisions, bulk writes, revs-diff and all-docs.
///
/// Follows replication-protocol.md §4 (revision rules) and gateway-rest-api.md §5–10. Routing to channels
/// is delegated to a ``ChannelRouter``.
public final class DocumentStore: Sendable {
    /// The storage.
    public let storage: any GatewayStorage
    /// Decides each revision's channels and grants.
    public let router: any ChannelRouter
    /// Revisions kept per branch.
    public let revsLimit: Int
    /// Told of every committed change, to wake `_changes` feeds.
    public let changeNotifier: ChangeNotifier

    /// Creates the document operations of a database.
    ///
    /// - Parameters:
    ///   - storage: The database's storage.
    ///   - router: Decides channels and grants of each new revision.
    ///   - revsLimit: Revisions kept per branch (`revs_limit`).
    ///   - changeNotifier: The notifier to tell of changes; by default a new one at the storage's last sequence.
    public init(
        storage: any GatewayStorage, router: any ChannelRouter = PropertyChannelRouter(), revsLimit: Int = 1000,
        changeNotifier: ChangeNotifier? = nil
    ) {
        self.storage = storage
        self.router = router
        self.revsLimit = revsLimit
        self.changeNotifier = changeNotifier ?? ChangeNotifier(sequence: (try? storage.lastSequence) ?? 0)
    }

    /// Computes a write on a snapshot of the document, outside the storage's lock — so the sync function calls of
    /// concurrent writes run in parallel; ``commit(_:)`` stores it.
    ///
    /// - Parameters:
    ///   - snapshots: Documents read beforehand (``GatewayStorage/documents(ids:)``), in which `id` is looked up
    ///     (absent: a new document); nil to read it now.
    ///   - edit: Gets the current document (nil if absent) and returns the new one (nil for no change) with the
    ///     revision written. It may run again at commit, so its only effects must be idempotent ones (storing
    ///     attachments).
    func prepare(
        id: String, snapshots: [String: StoredDocument]? = nil, _ edit: @escaping DocumentEdit
    ) throws(GatewayError) -> PreparedWrite {
        let snapshot: StoredDocument?
        if let snapshots { snapshot = snapshots[id] } else { snapshot = try storage.document(id: id) }
        return PreparedWrite(
            id: id, snapshot: snapshot, result: try edit(snapshot, storage), edit: edit, encodingRows: storage.encodesWritesAhead)
    }

    /// Stores a prepared write (``store(_:)``), then announces its sequence to the feeds.
    ///
    /// - Returns: The revision written.
    @discardableResult
    func commit(_ write: PreparedWrite) throws(GatewayError) -> RevisionID {
        let stored = try store(write)
        if let sequence = stored.sequence { storage.announce(sequence, to: changeNotifier) }
        return stored.revision
    }

    /// ``commit(_:)`` holding no thread while a storage across a network stores the write (a write whose document
    /// changed meanwhile is redone in place, ``redo(_:in:)``).
    @discardableResult
    func commit(_ write: PreparedWrite) async throws(GatewayError) -> RevisionID {
        guard let encoded = write.encoded else { return write.result.revision }
        let stored: (revision: RevisionID, sequence: UInt64?)
        if let sequence = try await storage.submit([encoded])[0].get() {
            stored = (write.result.revision, sequence)
        } else {
            stored = try redo(write)
        }
        if let sequence = stored.sequence { storage.announce(sequence, to: changeNotifier) }
        return stored.revision
    }

    /// Stores a prepared write, with the attachments it brings, if the document did not change since its snapshot
    /// (its rows were encoded outside the lock, ``EncodedWrite``); otherwise runs its edit again under the storage's
    /// lock, which always sees the latest document (``redo(_:in:)``). Feeds are not told: the caller announces.
    ///
    /// - Returns: The revision written, and the sequence it was stored at (nil when nothing changed).
    func store(_ write: PreparedWrite) throws(GatewayError) -> (revision: RevisionID, sequence: UInt64?) {
        guard let encoded = write.encoded else { return (write.result.revision, nil) }
        if let sequence = try storage.store(encoded) { return (write.result.revision, sequence) }
        return try redo(write)
    }

    /// Runs a prepared write's edit again under the storage's lock, on the latest document: its document changed
    /// since the write was computed.
    ///
    /// - Parameter batch: The storage as an open batch sees it (``GatewayStorage/inBatch(_:)``), to run in; nil for
    ///   a transaction of the write's own.
    /// - Returns: The revision written, and the sequence it was stored at (nil when nothing changed).
    func redo(
        _ write: PreparedWrite, in batch: (any GatewayStorage)? = nil
    ) throws(GatewayError) -> (revision: RevisionID, sequence: UInt64?) {
        var revision = write.result.revision
        let redone = try (batch ?? storage).update(documentID: write.id) { current, transaction throws(GatewayError) in
            let result = try write.edit(current, transaction)
            revision = result.revision
            if result.document != nil { try Self.storeAttachments(of: result, in: transaction) }
            return result.document
        }
        return (revision, redone?.sequence)
    }

    /// Stores the attachment bodies an accepted edit brings, inside its update's transaction: a revision the sync
    /// function refuses, or a write that fails, leaves none behind.
    private static func storeAttachments(
        of result: DocumentEditResult, in transaction: any GatewayStorage
    ) throws(GatewayError) {
        for data in result.attachments.values { try transaction.putAttachment(data) }
    }

    /// Runs an atomic storage update and announces its sequence.
    @discardableResult
    func update(
        documentID: String, _ transform: (StoredDocument?) throws(GatewayError) -> StoredDocument?
    ) throws(GatewayError) -> StoredDocument? {
        let stored = try storage.update(documentID: documentID, transform)
        if let stored { storage.announce(stored.sequence, to: changeNotifier) }
        return stored
    }

    // MARK: - Writing

    /// Saves a new revision made by a client (`PUT /{db}/{doc}`, `POST /{db}/`, `_bulk_docs` with new edits).
    ///
    /// ```swift
    /// let first = try store.put(id: "doc", body: ["title": "Groceries"])
    /// let second = try store.put(
    ///     id: "doc", body: ["title": "Groceries", "_attachments": ["list.txt": ["follows": true]]],
    ///     parentRevision: first.description, attachmentBodies: ["list.txt": Array("milk".utf8)])
    /// ```
    ///
    /// - Parameters:
    ///   - id: The document ID.
    ///   - body: The JSON body; `_rev` (or `parentRevision`) names the parent; `_deleted: true` deletes.
    ///     `_attachments` entries carry inline `data`, are stubs of the parent's (or stored) attachments, or are
    ///     marked `"follows": true` with their bytes in `attachmentBodies`.
    ///   - parentRevision: The `rev` query parameter or `If-Match`, overriding `_rev`.
    ///   - attachmentBodies: The bytes of `follows` attachments, by name (from a `multipart/related` body).
    ///   - user: The user writing, for the sync function's `require*` checks; nil on the admin port.
    /// - Returns: The new revision's ID.
    /// - Throws: 400 for bad IDs, bodies or attachments, 409 for conflicts (§4.2), 403/401 from routing.
    @discardableResult
    public func put(
        id: String, body: JSONValue, parentRevision: String? = nil, attachmentBodies: [String: [UInt8]] = [:],
        user: SyncUserContext? = nil
    ) throws(GatewayError) -> RevisionID {
        try commit(
            preparePut(
                id: id, body: body, parentRevision: parentRevision, attachmentBodies: attachmentBodies, user: user))
    }

    /// ``put(id:body:parentRevision:attachmentBodies:user:)`` computed on a snapshot (from `snapshots`, see
    /// ``prepare(id:snapshots:_:)``), for ``commit(_:)``.
    func preparePut(
        id: String, body: JSONValue, parentRevision: String? = nil, attachmentBodies: [String: [UInt8]] = [:],
        user: SyncUserContext? = nil, snapshots: [String: StoredDocument]? = nil
    ) throws(GatewayError) -> PreparedWrite {
        let edit = try putEdit(id: id, body: body, parentRevision: parentRevision, attachmentBodies: attachmentBodies)
        return try prepare(id: id, snapshots: snapshots, routed(edit, user: user))
    }

    /// The edit ``put(id:body:parentRevision:attachmentBodies:user:)`` makes, before routing: the body is checked
    /// now, the revision added to whichever document the edit is given.
    func putEdit(
        id: String, body: JSONValue, parentRevision: String? = nil, attachmentBodies: [String: [UInt8]] = [:]
    ) throws(GatewayError) -> UnroutedEdit {
        try DocumentValidation.checkDocumentID(id)
        let members = try DocumentValidation.checkBody(body)
        let parentText = parentRevision ?? members["_rev"]?.stringValue
        let parent = try parentText.map { text throws(GatewayError) in try DocumentValidation.parseRevision(text) }
        let deleted = members["_deleted"]?.boolValue ?? false
        let expiry = try DocumentValidation.expiry(members, now: Date())
        return { current, storage throws(GatewayError) in
            var document = current ?? StoredDocument(id: id)
            try Self.checkEditable(document, parent: parent)
            let parentBody = parent.map { document.tree[$0]?.body } ?? document.winner?.body
            let (stored, attachments) = try self.resolveAttachments(
                DocumentValidation.storedBody(members), generation: self.nextGeneration(document, parent: parent),
                parentBody: parentBody, bodies: attachmentBodies, keepingIncomingRevpos: false, in: storage)
            let revision: RevisionID
            // Serialized once: the digest's input (when it is the canonical form) and the stored body.
            let serialized = stored.serialized()
            do {
                // A deletion keeps the properties it carries, as CouchDB keeps them (readable with ?rev=).
                revision = try document.tree.addLocalEdit(
                    parent: parent, body: stored, deleted: deleted, serializedBody: serialized)
            } catch let error as CoreError {
                throw error.code == .conflict
                    ? .conflict(error.message.hasPrefix("Document exists") ? "Document exists" : "Document revision conflict")
                    : .badRequest(error.message)
            } catch {
                throw .internalError("\(error)")
            }
            if let expiry { document.expiry = expiry.date }
            return .added(
                UnroutedRevision(
                    document: document, revision: revision, attachments: attachments,
                    previousWinner: current?.winner?.id, serializedBody: serialized))
        }
    }

    /// Inserts a revision made elsewhere with its history (`new_edits=false`): never a conflict; an
    /// existing revision is accepted as is.
    ///
    /// - Parameters:
    ///   - id: The document ID.
    ///   - body: The body with `_rev` and `_revisions` (replication-protocol.md §4.3).
    ///   - attachmentBodies: The bytes of `follows` attachments, by name (from a `multipart/related` body).
    ///   - user: The user writing, for the sync function's `require*` checks; nil on the admin port.
    ///   - noConflicts: Refuse a revision that would make a conflict (BLIP's `noconflicts`, see
    ///     ``putExistingEdit(id:body:attachmentBodies:noConflicts:history:)``).
    /// - Throws: 400 for a missing or malformed `_rev`/`_revisions` or bad attachments; 409 for a conflict refused by
    ///   `noConflicts`; 403/401/500 from the sync function.
    @discardableResult
    public func putExisting(
        id: String, body: JSONValue, attachmentBodies: [String: [UInt8]] = [:], user: SyncUserContext? = nil,
        noConflicts: Bool = false, history: [RevisionID]? = nil
    ) throws(GatewayError) -> RevisionID {
        try commit(
            preparePutExisting(
                id: id, body: body, attachmentBodies: attachmentBodies, user: user, noConflicts: noConflicts,
                history: history))
    }

    /// ``putExisting(id:body:attachmentBodies:user:noConflicts:history:)`` computed on a snapshot (from `snapshots`, see
    /// ``prepare(id:snapshots:_:)``), for ``commit(_:)``.
    func preparePutExisting(
        id: String, body: JSONValue, attachmentBodies: [String: [UInt8]] = [:], user: SyncUserContext? = nil,
        snapshots: [String: StoredDocument]? = nil, noConflicts: Bool = false, history: [RevisionID]? = nil
    ) throws(GatewayError) -> PreparedWrite {
        let edit = try putExistingEdit(
            id: id, body: body, attachmentBodies: attachmentBodies, noConflicts: noConflicts, history: history)
        return try prepare(id: id, snapshots: snapshots, routed(edit, user: user))
    }

    /// The edit ``putExisting(id:body:attachmentBodies:user:noConflicts:history:)`` makes, before routing: the body and
    /// history are checked now, the revision inserted into whichever document the edit is given.
    ///
    /// With `noConflicts` (BLIP's `noconflicts`, spec: blip-sync-protocol.md §3.6) the revision must descend from the
    /// document's current revision — have it in its history — unless the document is absent or deleted; else 409.
    /// The check is part of the edit, so an accepted revision is accepted against the document it is finally stored
    /// on (an edit is run again at commit when its document changed since its snapshot): two clients pushing children
    /// of the same revision at once get one stored and one 409, never a conflict. (A refusal on the snapshot is not
    /// looked at again: a client refused while the document was being deleted proposes again.)
    ///
    /// - Parameter givenHistory: The revision's ancestry, newest first, when the caller has it as revision IDs (a BLIP
    ///   `rev`'s `history`, which may skip generations where it joins the document's revisions: see
    ///   ``CouchetteCore/RevisionTree/insert(_:body:deleted:history:)``); else it is read from `_revisions` or `_rev`.
    func putExistingEdit(
        id: String, body: JSONValue, attachmentBodies: [String: [UInt8]] = [:], noConflicts: Bool = false,
        history givenHistory: [RevisionID]? = nil
    ) throws(GatewayError) -> UnroutedEdit {
        try DocumentValidation.checkDocumentID(id)
        let members = try DocumentValidation.checkBody(body)
        let history: [RevisionID]
        if let givenHistory, !givenHistory.isEmpty {
            history = givenHistory
        } else if let revisions = members["_revisions"] {
            // `_revisions` names the revision; a `_rev` that disagrees is ignored, as CouchDB ignores it.
            do {
                history = try RevisionHistory(json: revisions).revisionIDs
            } catch {
                throw .badRequest("Bad _revisions")
            }
        } else if let rev = members["_rev"]?.stringValue {
            history = [try DocumentValidation.parseRevision(rev)]
        } else {
            throw .badRequest("Missing _rev with new_edits=false")
        }
        let revision = history[0]
        let deleted = members["_deleted"]?.boolValue ?? false
        let expiry = try DocumentValidation.expiry(members, now: Date())
        return { current, storage throws(GatewayError) in
            var document = current ?? StoredDocument(id: id)
            if document.tree.contains(revision) { return .unchanged(revision) }
            if noConflicts, let winner = document.winner, !winner.isDeleted, !history.contains(winner.id) {
                throw .conflict("Document update conflict")
            }
            let (stored, attachments) = try self.resolveAttachments(
                DocumentValidation.storedBody(members), generation: revision.generation,
                parentBody: history.dropFirst().lazy.compactMap { document.tree[$0]?.body }.first,
                bodies: attachmentBodies, keepingIncomingRevpos: true, in: storage)
            do {
                try document.tree.insert(revision, body: stored, deleted: deleted, history: history)
            } catch {
                throw .badRequest("Bad _revisions")
            }
            if let expiry { document.expiry = expiry.date }
            return .added(
                UnroutedRevision(
                    document: document, revision: revision, attachments: attachments,
                    previousWinner: current?.winner?.id))
        }
    }

    /// Throws the conflict a local edit on `parent` would meet (§4.2), before its attachments are resolved.
    private static func checkEditable(_ document: StoredDocument, parent: RevisionID?) throws(GatewayError) {
        if let parent {
            guard document.tree.isLeaf(parent) else { throw .conflict("Document revision conflict") }
        } else if let winner = document.winner, !winner.isDeleted {
            throw .conflict("Document exists")
        }
    }

    private func nextGeneration(_ document: StoredDocument, parent: RevisionID?) -> Int {
        if let parent { return parent.generation + 1 }
        return (document.winner?.id.generation ?? 0) + 1
    }

    // MARK: - Routing

    /// `edit` followed by the sync function for the revision it adds (``finish(_:routing:)``).
    func routed(_ edit: @escaping UnroutedEdit, user: SyncUserContext?) -> DocumentEdit {
        { current, storage throws(GatewayError) in
            switch try edit(current, storage) {
            case .unchanged(let revision):
                return DocumentEditResult(document: nil, revision: revision)
            case .added(let added):
                let request = self.routingRequest(of: added.revision, in: added.document)
                let result = try self.router.route(
                    document: request.document, oldDocument: request.oldDocument, user: user)
                return try self.finish(added, routing: result)
            }
        }
    }

    /// Records the sync function's result for a new revision: its channels, and when it wins, its grants and
    /// expiry (spec: sync-function.md §1); then prunes the tree to ``revsLimit``. When the edit made another, older
    /// revision the winner (a conflict's winner deleted), the function re-runs on that winner, without a user, to
    /// recompute the document's grants.
    func finish(_ added: UnroutedRevision, routing result: RoutingResult) throws(GatewayError) -> DocumentEditResult {
        var document = added.document
        let revision = added.revision
        document.channels[revision] = result.channels
        if let winner = document.winner?.id {
            if winner == revision {
                apply(result, to: &document)
            } else if winner != added.previousWinner, let rerun = try? routing(of: winner, in: document, user: nil) {
                apply(rerun, to: &document)
            }
        }
        // Channels of revisions no longer in the tree are forgotten.
        document.channels = document.channels.filter { document.tree.contains($0.key) }
        document.tree.prune(toDepth: revsLimit)
        return DocumentEditResult(
            document: document, revision: revision, attachments: added.attachments, serializedBody: added.serializedBody)
    }

    /// The sync function's result for one revision (see ``routingRequest(of:in:)``).
    func routing(of revision: RevisionID, in document: StoredDocument, user: SyncUserContext?) throws(GatewayError)
        -> RoutingResult
    {
        guard document.tree[revision] != nil else { return RoutingResult() }
        let request = routingRequest(of: revision, in: document)
        return try router.route(document: request.document, oldDocument: request.oldDocument, user: user)
    }

    /// The sync function's arguments for one revision: `doc` is its body with `_id` and `_rev` (`{_id, _deleted}`
    /// for a tombstone), `oldDoc` its parent's body with `_id` (`{_id, _deleted}` for a tombstone parent), or nil.
    func routingRequest(of revision: RevisionID, in document: StoredDocument) -> RoutingRequest {
        guard let node = document.tree[revision] else {
            return RoutingRequest(document: ["_id": .string(document.id), "_rev": .string(revision.description)], oldDocument: nil)
        }
        var input: [String: JSONValue]
        if node.isDeleted {
            input = ["_id": .string(document.id), "_deleted": true]
        } else {
            input = node.body?.objectValue ?? [:]
            input["_id"] = .string(document.id)
        }
        input["_rev"] = .string(revision.description)
        var old: JSONValue?
        if let parent = node.parent.flatMap({ document.tree[$0] }) {
            if parent.isDeleted {
                old = ["_id": .string(document.id), "_deleted": true]
            } else if var body = parent.body?.objectValue {
                body["_id"] = .string(document.id)
                old = .object(body)
            }
        }
        return RoutingRequest(document: .object(input), oldDocument: old)
    }

    /// Makes `result` the document's current grants and expiry.
    private func apply(_ result: RoutingResult, to document: inout StoredDocument) {
        document.access = result.access
        document.roleAccess = result.roles
        if let expiry = result.expiry { document.expiry = expiry }
    }

    // MARK: - Reading

    /// The body of a revision (the current one when `revision` is nil) with `_id`, `_rev` and `_deleted`,
    /// and with `_revisions` when `includeRevisions`.
    ///
    /// - Throws: 404 `missing` for unknown documents or revisions whose body is gone, 404 `deleted` for a
    ///   deleted document read without a revision.
    public func get(id: String, revision: String? = nil, includeRevisions: Bool = false) throws(GatewayError) -> JSONValue {
        let revisionID = try revision.map { text throws(GatewayError) in try DocumentValidation.parseRevision(text) }
        return try read(id: id, revision: revisionID, as: .admin, options: ReadOptions(includeRevisions: includeRevisions))
    }

    /// A revision's stored body with `_id`, `_rev` and, for a tombstone, `_deleted`.
    ///
    /// - Throws: 404 `missing` when the revision's body is no longer kept.
    func storedMembers(of node: RevisionTree.Node, in document: StoredDocument) throws(GatewayError)
        -> [String: JSONValue]
    {
        var members: [String: JSONValue]
        if node.isDeleted {
            members = node.body?.objectValue ?? [:]  // a tombstone keeps the properties it was written with
            members["_deleted"] = true
        } else {
            guard let body = node.body?.objectValue else { throw .notFound("missing") }
            members = body
        }
        members["_id"] = .string(document.id)
        members["_rev"] = .string(node.id.description)
        return members
    }

    /// `open_revs` as the admin: the given revisions (all leaves when nil), each as `{"ok": body}` or
    /// `{"missing": rev}`.
    public func openRevisions(id: String, revisions: [String]?, includeRevisions: Bool) throws(GatewayError) -> [JSONValue] {
        let wanted = try revisions.map { texts throws(GatewayError) in
            try texts.map { text throws(GatewayError) in try DocumentValidation.parseRevision(text) }
        }
        guard try storage.document(id: id) != nil else { throw .notFound("missing") }
        return try openRevisions(id: id, revisions: wanted, as: .admin, options: ReadOptions(includeRevisions: includeRevisions))
    }

    // MARK: - Bulk operations

    /// `_bulk_docs`: one result per document, in order (see ``BulkDocsWriter``).
    ///
    /// - Parameters:
    ///   - noConflicts: With `newEdits` false, refuse revisions that would make a conflict (409).
    ///   - histories: With `newEdits` false, each document's ancestry as revision IDs, by position (see
    ///   ``putExistingEdit(id:body:attachmentBodies:noConflicts:history:)``); `_revisions` is read where it is absent.
    public func bulkDocs(
        _ documents: [JSONValue], newEdits: Bool, user: SyncUserContext? = nil, noConflicts: Bool = false,
        histories: [[RevisionID]?] = []
    ) async -> [JSONValue] {
        await BulkDocsWriter(documents: self, user: user).write(
            documents, newEdits: newEdits, noConflicts: noConflicts, histories: histories)
    }

    /// `_revs_diff`: for each document, the revisions missing here and possible ancestors.
    public func revsDiff(_ request: [String: [String]]) async throws(GatewayError) -> JSONValue {
        var result: [String: JSONValue] = [:]
        // The trees at once, bodies unread.
        let stored = try await storage.fetchDocuments(ids: Array(request.keys), winnerAsText: true)
        for (id, texts) in request {
            let revisions = texts.compactMap { try? RevisionID(parsing: $0) }
            let tree = stored[id]?.tree ?? RevisionTree()
            let diff = tree.revsDiff(revisions)
            let invalid = texts.filter { (try? RevisionID(parsing: $0)) == nil }
            let missing = diff.missing.map(\.description) + invalid
            guard !missing.isEmpty else { continue }
            var entry: [String: JSONValue] = ["missing": .array(missing.map(JSONValue.string))]
            if !diff.possibleAncestors.isEmpty {
                entry["possible_ancestors"] = .array(diff.possibleAncestors.map { .string($0.description) })
            }
            result[id] = .object(entry)
        }
        return .object(result)
    }

    /// CouchDB's `_missing_revs`: per document, the offered revisions the database lacks
    /// (`{"missing_revs": {"doc": ["2-b"]}}`), documents lacking none left out.
    public func missingRevisions(_ request: [String: [String]]) async throws(GatewayError) -> JSONValue {
        var missing: [String: JSONValue] = [:]
        let stored = try await storage.fetchDocuments(ids: Array(request.keys), winnerAsText: true)
        for (id, texts) in request {
            let tree = stored[id]?.tree ?? RevisionTree()
            let lacking = texts.filter { text in
                guard let revision = try? RevisionID(parsing: text) else { return true }
                return !tree.contains(revision)
            }
            if !lacking.isEmpty { missing[id] = .array(lacking.map(JSONValue.string)) }
        }
        return ["missing_revs": .object(missing)]
    }

    /// A random 32-character lowercase hex document ID, as Sync Gateway generates.
    public static func generateID() -> String {
        RandomHex.make(bytes: 16)
    }
}
