import CouchetteCore

// MARK: - BulkDocsWriter

/// Saves the documents of a `_bulk_docs` request one by one (non-atomic), producing Sync Gateway's result
/// array (spec: gateway-rest-api.md §8).
///
/// ```swift
/// let results = await BulkDocsWriter(documents: store).write([["type": "task-list"], ["names": "Today"]], newEdits: true)
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
    ) async -> [JSONValue] {
        let isLocal: (JSONValue) -> Bool = { $0["_id"]?.stringValue?.hasPrefix(LocalDocumentStore.prefix) == true }
        let documentIndices = bodies.indices.filter { !isLocal(bodies[$0]) }
        let documentBodies = documentIndices.map { bodies[$0] }
        let documentHistories = documentIndices.map { $0 < histories.count ? histories[$0] : nil }
        // First every document's new revision is computed — sync function included — on snapshots read at once,
        // without the storage's lock, so concurrent requests use every core; then they are stored together (one
        // round trip to PostgreSQL), durable before the response is sent. A document changed meanwhile is redone.
        // A new edit without `_rev` makes a new document, unless one exists: it is computed as new without reading
        // (a batch of new documents costs one round trip, not two), and the store finds it stale and has it redone
        // on the stored document if one existed after all.
        let mayBeNew = documentBodies.map { body in newEdits && body["_rev"] == nil }
        let ids = documentBodies.indices.compactMap { mayBeNew[$0] ? nil : documentBodies[$0]["_id"]?.stringValue }
        let snapshots = ids.isEmpty ? [:] : try? await documents.storage.fetchDocuments(ids: ids, winnerAsText: false)
        // A result names its document by its `_id`, a non-string one by its JSON text; a failed document without
        // one is named by nothing, as the seeds show Sync Gateway answering.
        let resultIDs = documentBodies.map { body in body["_id"].map { $0.stringValue ?? $0.serializedString() } }
        let edits = documentBodies.indices.map { index in
            edit(
                documentBodies[index], id: resultIDs[index], newEdits: newEdits, noConflicts: noConflicts,
                history: documentHistories[index], snapshots: mayBeNew[index] ? [:] : snapshots)
        }
        var prepared = documents.prepare(batch: edits, user: user)
        // Refused as new (the sync function, a stub with nothing to find): computed again on the stored document, if
        // any, whose refusal, or conflict, is the answer.
        let refusedAsNew = documentBodies.indices.filter { index in
            guard mayBeNew[index], documentBodies[index]["_id"]?.stringValue != nil, case .success = edits[index],
                case .failure(let error) = prepared[index]
            else { return false }
            // A refusal that the stored document could change (the sync function's, a stub with nothing to find);
            // not a failure of the server's own (a sync function that ran out of time).
            return error.statusCode < 500
        }
        if !refusedAsNew.isEmpty {
            let refusedIDs = refusedAsNew.compactMap { documentBodies[$0]["_id"]?.stringValue }
            let stored = try? await documents.storage.fetchDocuments(ids: refusedIDs, winnerAsText: false)
            let retried = refusedAsNew.map { index in
                edit(
                    documentBodies[index], id: resultIDs[index], newEdits: newEdits, noConflicts: noConflicts,
                    history: documentHistories[index], snapshots: stored)
            }
            for (index, outcome) in zip(refusedAsNew, documents.prepare(batch: retried, user: user)) {
                prepared[index] = outcome
            }
        }
        var results = await store(prepared, ids: resultIDs)
        for body in bodies where isLocal(body) {
            results.append(await writeLocal(body, id: body["_id"]?.stringValue ?? ""))
        }
        return results
    }

    /// One document's edit with the snapshot it is computed on (looked up in `snapshots`, or read when they could
    /// not be), or why it cannot be written.
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

    /// Stores the prepared writes and returns one result each: first, in one call (one round trip to PostgreSQL,
    /// holding no thread), every write whose document is still its snapshot; then, in one transaction, the writes whose document changed
    /// meanwhile, computed again on the latest document. Feeds learn of the writes once they have committed.
    private func store(_ prepared: [Result<PreparedWrite, GatewayError>], ids: [String?]) async -> [JSONValue] {
        var results: [JSONValue?] = prepared.indices.map { index in
            guard case .failure(let error) = prepared[index] else { return nil }
            return Self.failure(id: ids[index], error: error)
        }
        var lastSequence: UInt64?
        func succeeded(_ index: Int, _ write: PreparedWrite, revision: RevisionID, sequence: UInt64?) {
            results[index] = ["id": .string(write.id), "rev": .string(revision.description)]
            if let sequence { lastSequence = max(lastSequence ?? 0, sequence) }
        }
        let writes = prepared.map { try? $0.get() }
        let encoded = writes.indices.compactMap { index in writes[index]?.encoded.map { (index, $0) } }
        var stale: [Int] = []
        do {
            let outcomes = encoded.isEmpty ? [] : try await documents.storage.submit(encoded.map(\.1))
            for ((index, _), outcome) in zip(encoded, outcomes) {
                guard let write = writes[index] else { continue }
                switch outcome {
                case .success(let sequence?): succeeded(index, write, revision: write.result.revision, sequence: sequence)
                case .success(nil): stale.append(index)
                case .failure(let error): results[index] = Self.failure(id: ids[index], error: error)
                }
            }
        } catch {
            // Nothing was stored.
            for (index, _) in encoded { results[index] = Self.failure(id: ids[index], error: error) }
        }
        // Writes that change nothing succeed as they are.
        for (index, write) in writes.enumerated() where results[index] == nil && write?.encoded == nil {
            if let write { succeeded(index, write, revision: write.result.revision, sequence: nil) }
        }
        if !stale.isEmpty {
            do {
                var redoneLast: UInt64?
                try documents.storage.inBatch(updating: stale.compactMap { writes[$0]?.id }) { batch throws(GatewayError) in
                    // A storage may run the batch again (PostgreSQL, after a deadlock): each run sets every result,
                    // and only the last run's sequences count.
                    redoneLast = nil
                    for index in stale {
                        guard let write = writes[index] else { continue }
                        do throws(GatewayError) {
                            let (revision, sequence) = try documents.redo(write, in: batch)
                            results[index] = ["id": .string(write.id), "rev": .string(revision.description)]
                            if let sequence { redoneLast = max(redoneLast ?? 0, sequence) }
                        } catch {
                            results[index] = Self.failure(id: ids[index], error: error)
                        }
                    }
                }
                if let redoneLast { lastSequence = max(lastSequence ?? 0, redoneLast) }
            } catch {
                // The commit failed: none of them was stored.
                for index in stale { results[index] = Self.failure(id: ids[index], error: error) }
            }
        }
        if let lastSequence { documents.storage.announce(lastSequence, to: documents.changeNotifier) }
        return results.enumerated().map { index, result in
            result ?? Self.failure(id: ids[index], error: GatewayError.internalError("The write was not stored"))
        }
    }

    private func writeLocal(_ body: JSONValue, id: String) async -> JSONValue {
        do {
            let local = LocalDocumentStore(storage: documents.storage)
            let revision = try await local.put(id: String(id.dropFirst(LocalDocumentStore.prefix.count)), body: body)
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
