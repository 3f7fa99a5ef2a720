import CouchetteCore

// MARK: - BulkDocsWriter

/// Saves the documents of a `_bulk_docs` request one by one (non-atomic), producing Sync Gateway's result
/// array (spec: gateway-rest-api.md §8).
///
/// ```swift
/// let results = BulkDocsWriter(documents: store).write([["type": "task-list"], ["names": "Today"]], newEdits: true)
/// // [{"id":"e498…","rev":"1-…"}, {"error":"forbidden","reason":"type property missing","status":403}]
/// ```
///
/// A result names its document by the given `_id` (a non-string one, refused with 400, by its JSON text); a failed
/// document without `_id` gets no `id`, as the seeds show. Documents whose `_id` starts with `_local/` are stored as
/// local documents and their results come after all others.
public struct BulkDocsWriter: Sendable {
    /// The document operations to write through.
    public let documents: DocumentStore

    /// The user writing, for the sync function; nil on the admin port.
    public let user: SyncUserContext?

    /// Creates a writer.
    public init(documents: DocumentStore, user: SyncUserContext? = nil) {
        self.documents = documents
        self.user = user
    }

    /// Saves every document and returns one result per document.
    ///
    /// - Parameters:
    ///   - bodies: The documents.
    ///   - newEdits: `false` inserts revisions made elsewhere with their `_revisions`.
    ///   - noConflicts: With `newEdits` false, refuse (409) a revision that would make a conflict, checked against the
    ///     document it is finally stored on (``DocumentStore/putExistingEdit(id:body:attachmentBodies:noConflicts:history:)``).
    ///   - histories: With `newEdits` false, each document's ancestry as revision IDs, by position, where the caller
    ///     has it so (``DocumentStore/putExistingEdit(id:body:attachmentBodies:noConflicts:history:)``).
    public func write(
        _ bodies: [JSONValue], newEdits: Bool, noConflicts: Bool = false, histories: [[RevisionID]?] = []
    ) -> [JSONValue] {
        let isLocal: (JSONValue) -> Bool = { $0["_id"]?.stringValue?.hasPrefix(LocalDocumentStore.prefix) == true }
        let documentIndices = bodies.indices.filter { !isLocal(bodies[$0]) }
        let documentBodies = documentIndices.map { bodies[$0] }
        let documentHistories = documentIndices.map { $0 < histories.count ? histories[$0] : nil }
        // First every document's new revision is computed — sync function included — on snapshots read at once,
        // without the storage's lock, so concurrent requests use every core; then one transaction stores them all,
        // durable together before the response is sent. A document changed meanwhile is redone at commit.
        let ids = documentBodies.compactMap { $0["_id"]?.stringValue }
        let snapshots = ids.isEmpty ? [:] : try? documents.storage.documents(ids: ids)
        // A result names its document by its `_id`, a non-string one by its JSON text; a failed document without
        // one is named by nothing, as the seeds show Sync Gateway answering.
        let resultIDs = documentBodies.map { body in body["_id"].map { $0.stringValue ?? $0.serializedString() } }
        let edits = documentBodies.indices.map { index in
            edit(
                documentBodies[index], id: resultIDs[index], newEdits: newEdits, noConflicts: noConflicts,
                history: documentHistories[index], snapshots: snapshots)
        }
        let prepared = documents.prepare(batch: edits, user: user)
        var results: [JSONValue]
        do {
            var lastSequence: UInt64?
            results = try documents.storage.inBatch(updating: ids) { () throws(GatewayError) in
                // A storage may run the batch again (PostgreSQL, after a deadlock): count this run's sequences only.
                lastSequence = nil
                return zip(resultIDs, prepared).map { id, write in
                    let (result, sequence) = store(write, id: id)
                    if let sequence { lastSequence = max(lastSequence ?? 0, sequence) }
                    return result
                }
            }
            // Feeds learn of the batch once it has committed.
            if let lastSequence { documents.storage.announce(lastSequence, to: documents.changeNotifier) }
        } catch {
            // The commit failed: none of them was stored.
            results = resultIDs.map { Self.failure(id: $0, error: error) }
        }
        for body in bodies where isLocal(body) {
            results.append(writeLocal(body, id: body["_id"]?.stringValue ?? ""))
        }
        return results
    }

    /// One document's edit with the snapshot it is computed on, or why it cannot be written.
    private func edit(
        _ body: JSONValue, id givenOrNone: String?, newEdits: Bool, noConflicts: Bool, history: [RevisionID]?,
        snapshots: [String: StoredDocument]?
    ) -> Result<DocumentStore.BatchEdit, GatewayError> {
        let id = givenOrNone ?? DocumentStore.generateID()
        let givenID = body["_id"]?.stringValue
        do throws(GatewayError) {
            guard case .object = body else { throw GatewayError.badRequest("Document body must be a JSON object") }
            if body["_id"] != nil && givenID == nil { throw GatewayError.badRequest("Document id must be a string") }
            if !newEdits && givenID == nil { throw GatewayError.badRequest("Document _id is missing") }
            let edit =
                try newEdits
                ? documents.putEdit(id: id, body: body)
                : documents.putExistingEdit(id: id, body: body, noConflicts: noConflicts, history: history)
            // A generated ID is new: no snapshot to read.
            let snapshot: StoredDocument? =
                if givenID == nil { nil } else if let snapshots { snapshots[id] } else { try documents.storage.document(id: id) }
            return .success(DocumentStore.BatchEdit(id: id, snapshot: snapshot, edit: edit))
        } catch {
            return .failure(error)
        }
    }

    /// Stores a prepared write inside the batch's transaction; returns its result and the sequence it took.
    private func store(_ write: Result<PreparedWrite, GatewayError>, id: String?) -> (JSONValue, UInt64?) {
        do throws(GatewayError) {
            let write = try write.get()
            let (revision, sequence) = try documents.store(write)
            return (["id": .string(write.id), "rev": .string(revision.description)], sequence)
        } catch {
            return (Self.failure(id: id, error: error), nil)
        }
    }

    private func writeLocal(_ body: JSONValue, id: String) -> JSONValue {
        do {
            let local = LocalDocumentStore(storage: documents.storage)
            let revision = try local.put(id: String(id.dropFirst(LocalDocumentStore.prefix.count)), body: body)
            return ["id": .string(id), "rev": .string(revision)]
        } catch {
            return Self.failure(id: id, error: error)
        }
    }

    /// `{"id"?, "error", "reason", "status"}` with CouchDB's error names.
    static func failure(id: String?, error: any Error) -> JSONValue {
        let gatewayError = error as? GatewayError ?? .internalError("Internal error")
        var result: [String: JSONValue] = [
            "error": .string(GatewayError.couchErrorName(forStatus: gatewayError.statusCode)),
            "reason": .string(gatewayError.reason),
            "status": .int(Int64(gatewayError.statusCode)),
        ]
        if let id { result["id"] = .string(id) }
        return .object(result)
    }
}
