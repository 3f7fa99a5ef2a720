import CouchetteCore

// MARK: - LocalDocumentStore

/// `_local` documents (spec: gateway-rest-api.md §12): not replicated, not in `_changes`, not routed; revisions
/// `0-N`. Replicators keep their checkpoints here.
///
/// ```swift
/// let local = LocalDocumentStore(storage: storage)
/// let rev = try await local.put(id: "checkpoint", body: ["lastSequence": 12])       // "0-1"
/// try await local.put(id: "checkpoint", body: ["_rev": "0-1", "lastSequence": 20])  // "0-2"
/// try await local.get(id: "checkpoint")  // {"_id":"_local/checkpoint","_rev":"0-2","lastSequence":20}
/// ```
///
/// A storage across a network holds no thread while it answers.
public struct LocalDocumentStore: Sendable {
    /// The ID prefix of local documents in URLs and `_bulk_docs`.
    public static let prefix = "_local/"

    /// The storage.
    public let storage: any GatewayStorage

    /// Creates the local-document operations of a storage.
    public init(storage: any GatewayStorage) {
        self.storage = storage
    }

    /// A local document with `_id` (`_local/<id>`) and `_rev`.
    ///
    /// - Throws: 404 `missing` when absent.
    public func get(id: String) async throws(GatewayError) -> JSONValue {
        guard let (revision, body) = try await storage.fetchLocalDocument(id: id) else { throw .notFound("missing") }
        var members = body.objectValue ?? [:]
        members["_id"] = .string(Self.prefix + id)
        members["_rev"] = .string(revision)
        return .object(members)
    }

    /// Stores a local document; `_rev` (or `revision`) must name the stored revision, and be absent for a new one.
    /// Other members starting with `_` are dropped. A body with `"_deleted": true` deletes the document instead, as
    /// CouchDB does (through `PUT` or `_bulk_docs`).
    ///
    /// - Returns: The new revision `0-N`, or `0-0` for a deletion (CouchDB's).
    /// - Throws: 400 for a non-object body or bad ID, 404 "No previous revision to replace" for a `_rev` on an
    ///   absent document, 409 "Document update conflict" for a mismatch.
    @discardableResult
    public func put(id: String, body: JSONValue, revision: String? = nil) async throws(GatewayError) -> String {
        guard !id.isEmpty, id.utf8.count <= 250 else { throw .badRequest("Invalid doc ID") }
        guard case .object(let members) = body else { throw .badRequest("Document body must be a JSON object") }
        let expected = revision ?? members["_rev"]?.stringValue
        if members["_deleted"] == true {
            try await delete(id: id, revision: expected)
            return Self.deletedRevision
        }
        if expected != nil, try await storage.fetchLocalDocument(id: id) == nil {
            throw .notFound("No previous revision to replace")
        }
        let stored = members.filter { !$0.key.hasPrefix("_") }
        do {
            return try await storage.submitLocalDocument(id: id, body: .object(stored), expectedRevision: expected)
        } catch where error.statusCode == 409 {
            throw .conflict("Document update conflict")
        }
    }

    /// The revision CouchDB answers a local document's deletion with.
    public static let deletedRevision = "0-0"

    /// Deletes a local document; `revision` must match the stored one.
    ///
    /// - Throws: 404 when absent, 409 on a mismatch.
    public func delete(id: String, revision: String?) async throws(GatewayError) {
        guard let revision else { throw .conflict("Document update conflict") }
        try await storage.submitLocalDocumentDeletion(id: id, expectedRevision: revision)
    }
}
