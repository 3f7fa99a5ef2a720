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
/// A failed document's result names its `id` only when the request gave one; documents whose `_id` starts with
/// `_local/` are stored as local documents and their results come after all others.
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
    public func write(_ bodies: [JSONValue], newEdits: Bool) -> [JSONValue] {
        let isLocal: (JSONValue) -> Bool = { $0["_id"]?.stringValue?.hasPrefix(LocalDocumentStore.prefix) == true }
        let documentBodies = bodies.filter { !isLocal($0) }
        // One transaction for the documents (each a savepoint): their results are durable together, before the
        // response is sent.
        var results: [JSONValue]
        do {
            results = try documents.storage.inBatch { () throws(GatewayError) in
                documentBodies.map { write($0, newEdits: newEdits) }
            }
        } catch {
            // The commit failed: none of them was stored.
            results = documentBodies.map { Self.failure(id: $0["_id"]?.stringValue, error: error) }
        }
        for body in bodies where isLocal(body) {
            results.append(writeLocal(body, id: body["_id"]?.stringValue ?? ""))
        }
        return results
    }

    /// Saves one document and returns its result.
    private func write(_ body: JSONValue, newEdits: Bool) -> JSONValue {
        let givenID = body["_id"]?.stringValue
        do {
            guard case .object = body else { throw GatewayError.badRequest("Document body must be a JSON object") }
            if !newEdits && givenID == nil { throw GatewayError.badRequest("Document _id is missing") }
            let id = givenID ?? DocumentStore.generateID()
            let revision =
                try newEdits
                ? documents.put(id: id, body: body, user: user) : documents.putExisting(id: id, body: body, user: user)
            return ["id": .string(id), "rev": .string(revision.description)]
        } catch {
            return Self.failure(id: givenID, error: error)
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
