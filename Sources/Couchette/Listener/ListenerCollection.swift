import CouchetteCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

// MARK: - ListenerCollection

/// One collection served by a ``URLEndpointListener`` as a database of the CouchDB replication protocol.
///
/// The replication endpoints go through the same ``LocalReplicationPeer`` a local replicator uses, and revisions
/// take the same wire forms a remote peer sends (``ReplicatedRevision`` `wireBody`, `multipart/related`), so
/// what the listener serves is what our replicator reads and writes on the other side.
struct ListenerCollection: Sendable {
    /// Its protocol database name.
    let name: String
    let collection: Collection
    let readOnly: Bool

    /// The collection as the replication protocol sees it: conflicts kept, nothing purged on a client's word.
    var peer: LocalReplicationPeer { LocalReplicationPeer(collection: collection, conflictResolver: nil, autoPurge: false) }

    func respond(to request: Request, path: [String]) async throws -> Response {
        guard let first = path.first else { return try await database(request) }
        switch first {
        case "_changes":
            try ListenerResponder.require(request, [.get, .head, .post])
            return try await ListenerChangesFeed(collection: self, query: request.uri.queryParameters).response()
        case "_revs_diff":
            try ListenerResponder.require(request, [.post])
            return try await revsDiff(Self.jsonObject(request))
        case "_bulk_get":
            try ListenerResponder.require(request, [.post])
            return try await bulkGet(Self.jsonObject(request), query: request.uri.queryParameters)
        case "_bulk_docs":
            try ListenerResponder.require(request, [.post])
            return try await bulkDocs(Self.jsonObject(request))
        case "_all_docs":
            try ListenerResponder.require(request, [.get, .head, .post])
            let keys = request.method == .post ? try await Self.jsonObject(request)["keys"] : nil
            return try allDocuments(request.uri.queryParameters, keys: keys)
        case "_ensure_full_commit":
            try ListenerResponder.require(request, [.post])
            return ListenerReply.json(["ok": true, "instance_start_time": "0"], status: .created)
        case "_local":
            guard path.count >= 2 else { throw CouchetteError(.notFound, message: "missing") }
            return try await localDocument(request, id: path.dropFirst().joined(separator: "/"))
        default:
            guard !first.hasPrefix("_") else {
                throw CouchetteError(.notFound, message: "unknown URL \(first)")
            }
            if path.count == 1 { return try await document(request, id: first) }
            try ListenerResponder.require(request, [.get, .head])
            return try attachment(documentID: first, name: path.dropFirst().joined(separator: "/"), query: request.uri.queryParameters)
        }
    }

    // MARK: - Database

    private func database(_ request: Request) async throws -> Response {
        switch request.method {
        case .get, .head:
            let sequence = collection.lastSequence
            return ListenerReply.json([
                "db_name": .string(name), "doc_count": .int(Int64(collection.count)), "update_seq": .int(Int64(sequence)),
                "committed_update_seq": .int(Int64(sequence)), "purge_seq": 0, "instance_start_time": "0",
            ])
        case .put:
            throw CouchetteError(.preconditionFailed, message: "The database could not be created, the file already exists.")
        case .post:
            try requireWritable()
            var body = try await Self.jsonObject(request)
            let id = body["_id"]?.stringValue ?? MutableDocument.generateID()
            body["_id"] = nil
            let saved = try collection.putProperties(Self.properties(body), documentID: id)
            return Self.written(id: id, revision: saved.revisionID)
        default:
            throw CouchetteError(.badInput, message: "Method \(request.method) not allowed here", status: 405)
        }
    }

    // MARK: - Replication endpoints

    private func revsDiff(_ body: [String: JSONValue]) async throws -> Response {
        var asked: [String: [String]] = [:]
        for (id, revisions) in body {
            guard let list = revisions.arrayValue?.compactMap(\.stringValue) else {
                throw CouchetteError(.badInput, message: "_revs_diff wants a list of revisions for \"\(id)\"")
            }
            asked[id] = list
        }
        var answer: [String: JSONValue] = [:]
        for (id, missing) in try await peer.revsDiff(asked) {
            var entry: [String: JSONValue] = ["missing": .array(missing.missing.map(JSONValue.string))]
            if !missing.possibleAncestors.isEmpty {
                entry["possible_ancestors"] = .array(missing.possibleAncestors.map(JSONValue.string))
            }
            answer[id] = .object(entry)
        }
        return ListenerReply.json(.object(answer))
    }

    /// `_bulk_get`: each asked revision (the current one when no `rev` is given) as `{"ok": …}`, or an error.
    private func bulkGet(_ body: [String: JSONValue], query: FlatDictionary<Substring, Substring>) async throws -> Response {
        guard let items = body["docs"]?.arrayValue else {
            throw CouchetteError(.badInput, message: "_bulk_get wants {\"docs\": [{\"id\": …}]}")
        }
        var wanted: [WantedRevision] = []
        var asked: [(id: String, revision: String?)] = []
        for item in items {
            guard let id = item["id"]?.stringValue else {
                throw CouchetteError(.badInput, message: "Every _bulk_get entry needs an \"id\"")
            }
            let revision = try item["rev"]?.stringValue ?? collection.currentRevision(documentID: id)?.revisionID
            asked.append((id, revision))
            if let revision {
                let ancestors = item["atts_since"]?.arrayValue?.compactMap(\.stringValue) ?? []
                wanted.append(WantedRevision(documentID: id, revisionID: revision, knownAncestors: ancestors))
            }
        }
        let found = try await revisionsByKey(wanted)
        let form = WireForm(query)
        let results = asked.map { id, revision -> JSONValue in
            let entry: JSONValue
            if let revision, let stored = found[Self.key(id, revision)] {
                entry = ["ok": form.body(of: stored)]
            } else {
                entry = [
                    "error": [
                        "id": .string(id), "rev": revision.map(JSONValue.string) ?? .null, "error": "not_found",
                        "reason": "missing",
                    ]
                ]
            }
            return ["id": .string(id), "docs": [entry]]
        }
        return ListenerReply.json(["results": .array(results)])
    }

    /// `_bulk_docs`: new revisions (`new_edits` true, each like a `PUT`) or revisions made elsewhere (`new_edits`
    /// false, stored with their history). One result per document, in order.
    private func bulkDocs(_ body: [String: JSONValue]) async throws -> Response {
        guard let documents = body["docs"]?.arrayValue else {
            throw CouchetteError(.badInput, message: "_bulk_docs wants {\"docs\": […]}")
        }
        if readOnly {
            // Each document refused, as a sync function would: a replicator reports them and its pull goes on.
            let refusal = CouchetteError(.forbidden, message: "The listener is read-only")
            return ListenerReply.json(
                .array(documents.map { Self.failure(id: $0["_id"]?.stringValue, revision: $0["_rev"]?.stringValue, refusal) }),
                status: .created)
        }
        if body["new_edits"]?.boolValue == false {
            var results = [JSONValue](repeating: .null, count: documents.count)
            var revisions: [(index: Int, revision: ReplicatedRevision)] = []
            for (index, document) in documents.enumerated() {
                do {
                    guard let object = document.objectValue, let revision = try ReplicatedRevision(wireBody: object) else {
                        throw CouchetteError(.badInput, message: "A document needs \"_id\" and \"_rev\" with new_edits=false")
                    }
                    try Self.refuseReservedProperties(object)
                    revisions.append((index, revision))
                } catch {
                    results[index] = Self.failure(id: document["_id"]?.stringValue, revision: document["_rev"]?.stringValue, error)
                }
            }
            let stored = try await peer.store(revisions.map(\.revision))
            for ((index, revision), result) in zip(revisions, stored) {
                results[index] =
                    result.error.map { Self.failure(id: revision.documentID, revision: revision.revisionID, $0) }
                    ?? ["id": .string(revision.documentID), "rev": .string(revision.revisionID)]
            }
            return ListenerReply.json(.array(results), status: .created)
        }
        var results: [JSONValue] = []
        try collection.database.inBatch {
            for document in documents {
                let id = document["_id"]?.stringValue ?? MutableDocument.generateID()
                do {
                    guard var object = document.objectValue else {
                        throw CouchetteError(.badInput, message: "A document must be a JSON object")
                    }
                    object["_id"] = nil
                    let saved = try collection.putProperties(Self.properties(object), documentID: id)
                    results.append(["ok": true, "id": .string(id), "rev": .string(saved.revisionID ?? "")])
                } catch {
                    results.append(Self.failure(id: id, revision: nil, error))
                }
            }
        }
        return ListenerReply.json(.array(results), status: .created)
    }

    // MARK: - Documents

    private func document(_ request: Request, id: String) async throws -> Response {
        let query = request.uri.queryParameters
        switch request.method {
        case .get, .head:
            return try await read(id: id, query: query)
        case .put:
            try requireWritable()
            if query.get("new_edits") == "false" { return try await storeExisting(request, id: id) }
            var body = try await Self.jsonObject(request)
            body["_id"] = nil
            if let revision = query.get("rev") { body["_rev"] = .string(revision) }
            let saved = try collection.putProperties(Self.properties(body), documentID: id)
            return Self.written(id: id, revision: saved.revisionID)
        case .delete:
            try requireWritable()
            guard let revision = query.get("rev") ?? request.headers[.ifMatch]?.trimmingCharacters(in: ["\""]) else {
                throw CouchetteError(.conflict, message: "Document update conflict: give the revision to delete")
            }
            let saved = try collection.putProperties(["_rev": revision, "_deleted": true], documentID: id)
            return Self.written(id: id, revision: saved.revisionID, status: .ok)
        default:
            throw CouchetteError(.badInput, message: "Method \(request.method) not allowed here", status: 405)
        }
    }

    /// `GET /{db}/{doc}`: the current revision, `?rev=`, or `?open_revs=` (all leaves or a list) as a JSON array.
    private func read(id: String, query: FlatDictionary<Substring, Substring>) async throws -> Response {
        let form = WireForm(query)
        let ancestors = try query.get("atts_since").map(Self.stringList) ?? []
        if let openRevisions = query.get("open_revs") {
            let revisions =
                openRevisions == "all"
                ? try collection.leafRevisions(documentID: id).compactMap(\.revisionID) : try Self.stringList(openRevisions)
            let found = try await revisionsByKey(
                revisions.map { WantedRevision(documentID: id, revisionID: $0, knownAncestors: ancestors) })
            return ListenerReply.json(
                .array(
                    revisions.map { revision -> JSONValue in
                        if let stored = found[Self.key(id, revision)] { return ["ok": form.body(of: stored)] }
                        return ["missing": .string(revision)]
                    }))
        }
        let revision: String
        if let asked = query.get("rev") {
            revision = asked
        } else {
            guard let current = try collection.currentRevision(documentID: id), let currentID = current.revisionID else {
                throw CouchetteError(.notFound, message: "missing")
            }
            guard !current.isDeletion else { throw CouchetteError(.notFound, message: "deleted") }
            revision = currentID
        }
        guard
            let stored = try await peer.revisions([
                WantedRevision(documentID: id, revisionID: revision, knownAncestors: ancestors)
            ]).first
        else { throw CouchetteError(.notFound, message: "missing") }
        var body = form.body(of: stored)
        if query.get("conflicts") == "true", case .object(var members) = body {
            let conflicts = try collection.conflictingRevisions(documentID: id).compactMap(\.revisionID)
                .filter { $0 != revision }
            if !conflicts.isEmpty { members["_conflicts"] = JSONValue.array(conflicts.map(JSONValue.string)) }
            body = .object(members)
        }
        return ListenerReply.json(body)
    }

    /// `PUT /{db}/{doc}?new_edits=false`: a revision made elsewhere, JSON or `multipart/related` with its attachments.
    private func storeExisting(_ request: Request, id: String) async throws -> Response {
        let bytes = try await Self.bytes(of: request)
        let contentType = request.headers[.contentType] ?? "application/json"
        let parsed: ReplicatedRevision?
        if HeaderValue(parsing: contentType).isMultipart {
            parsed = try ReplicatedRevision(related: MultipartBody(parsing: bytes, contentType: contentType))
        } else {
            guard case .object(var members) = try JSONValue(parsing: bytes) else {
                throw CouchetteError(.badInput, message: "The document must be a JSON object")
            }
            try Self.refuseReservedProperties(members)
            members["_id"] = .string(id)
            parsed = try ReplicatedRevision(wireBody: members)
        }
        guard let revision = parsed, revision.documentID == id else {
            throw CouchetteError(.badInput, message: "The document needs its \"_rev\" (and the URL's \"_id\")")
        }
        if let error = try await peer.store([revision]).first?.error { throw error }
        return Self.written(id: id, revision: revision.revisionID)
    }

    /// `GET /{db}/{doc}/{attachment}`: an attachment's content, of the current revision or `?rev=`.
    private func attachment(documentID: String, name: String, query: FlatDictionary<Substring, Substring>) throws -> Response {
        let revision =
            try query.get("rev").map { try collection.revision(documentID: documentID, revisionID: $0) }
            ?? collection.currentRevision(documentID: documentID)
        guard let revision, !revision.isDeletion else { throw CouchetteError(.notFound, message: "missing") }
        guard let blob = revision.attachment(named: name), let content = blob.content else {
            throw CouchetteError(.notFound, message: "Document \"\(documentID)\" has no attachment \"\(name)\"")
        }
        return Response(
            status: .ok, headers: [.contentType: blob.contentType ?? "application/octet-stream"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: content)))
    }

    /// `_all_docs`: documents by ID with `{"rev"}`, paged and bounded as CouchDB's.
    private func allDocuments(_ query: FlatDictionary<Substring, Substring>, keys: JSONValue?) throws -> Response {
        var request = collection.createAllDocumentsQuery()
        if let limit = query.get("limit").flatMap(Int.init) { request.limit = max(0, limit) }
        if let skip = query.get("skip").flatMap(Int.init) { request.skip = max(0, skip) }
        request.descending = query.get("descending") == "true"
        request.inclusiveEnd = query.get("inclusive_end") != "false"
        if let start = query.get("startkey") ?? query.get("start_key") { request.startKey = try Self.jsonQueryValue(start) }
        if let end = query.get("endkey") ?? query.get("end_key") { request.endKey = try Self.jsonQueryValue(end) }
        if let keys = try keys ?? query.get("keys").map({ try JSONValue(parsing: Array($0.utf8)) }) {
            request.keys = (keys.arrayValue ?? []).map(DocumentValues.value(from:))
        }
        let includeDocs = query.get("include_docs") == "true"
        let rows = try request.run().allRows.map { row -> JSONValue in
            var entry: [String: JSONValue] = [
                "id": row.sourceDocumentID.map(JSONValue.string) ?? .null, "key": row.keyJSON, "value": row.valueJSON,
            ]
            if includeDocs, let id = row.sourceDocumentID, let current = try? collection.currentRevision(documentID: id) {
                entry["doc"] = current.isDeletion ? .null : Self.plainBody(of: current)
            }
            return .object(entry)
        }
        return ListenerReply.json([
            "total_rows": .int(Int64(collection.count)), "offset": .int(Int64(request.skip)), "rows": .array(rows),
        ])
    }

    // MARK: - Local documents

    private func localDocument(_ request: Request, id: String) async throws -> Response {
        let storedID = peer.localID(id)
        let database = collection.database
        switch request.method {
        case .get, .head:
            guard let properties = try database.localDocument(withID: storedID) else {
                throw CouchetteError(.notFound, message: "missing")
            }
            var body = try JSONValue(foundationObject: properties).objectValue ?? [:]
            body["_id"] = .string("_local/\(id)")
            return ListenerReply.json(.object(body))
        case .put:
            let body = try await Self.jsonObject(request)
            let revision = try database.putLocalDocument(Self.properties(body.filter { $0.key != "_id" }), withID: storedID)
            return Self.written(id: "_local/\(id)", revision: revision)
        case .delete:
            try database.deleteLocalDocument(withID: storedID)
            return Self.written(id: "_local/\(id)", revision: "0-0", status: .ok)
        default:
            throw CouchetteError(.badInput, message: "Method \(request.method) not allowed here", status: 405)
        }
    }

    // MARK: - Helpers

    private func requireWritable() throws {
        if readOnly { throw CouchetteError(.forbidden, message: "The listener is read-only") }
    }

    /// The stored revisions of `wanted`, by ``key(_:_:)``.
    private func revisionsByKey(_ wanted: [WantedRevision]) async throws -> [String: ReplicatedRevision] {
        guard !wanted.isEmpty else { return [:] }
        let found = try await peer.revisions(wanted)
        return Dictionary(found.map { (Self.key($0.documentID, $0.revisionID), $0) }, uniquingKeysWith: { first, _ in first })
    }

    private static func key(_ documentID: String, _ revisionID: String) -> String { "\(documentID)\u{0}\(revisionID)" }

    /// A revision's body with `_id` and `_rev`, without history or attachment content.
    static func plainBody(of revision: SavedRevision) -> JSONValue {
        var body = revision.body?.objectValue ?? [:]
        body["_id"] = .string(revision.documentID)
        body["_rev"] = .string(revision.revisionID ?? "")
        if revision.isDeletion { body["_deleted"] = true }
        return .object(body)
    }

    /// `{"ok": true, "id", "rev"}` (201 by default).
    private static func written(id: String, revision: String?, status: HTTPResponse.Status = .created) -> Response {
        ListenerReply.json(["ok": true, "id": .string(id), "rev": revision.map(JSONValue.string) ?? .null], status: status)
    }

    /// One refused document of a `_bulk_docs`.
    private static func failure(id: String?, revision: String?, _ error: any Error) -> JSONValue {
        let error = CouchetteError.wrap(error)
        return [
            "id": id.map(JSONValue.string) ?? .null, "rev": revision.map(JSONValue.string) ?? .null,
            "error": .string(error.errorName), "reason": .string(error.message), "status": .int(Int64(error.status)),
        ]
    }

    /// A client may not claim a lost access (`_removed`), which only a source's changes feed tells.
    private static func refuseReservedProperties(_ body: [String: JSONValue]) throws {
        if body["_removed"] != nil {
            throw CouchetteError(.badInput, message: "Bad special document member: _removed")
        }
    }

    /// JSON members as document properties: the values stay JSON, but `_rev` and `_deleted`, which the saving
    /// code reads, become Swift values.
    private static func properties(_ body: [String: JSONValue]) -> [String: Any] {
        var properties: [String: Any] = body.mapValues { $0 }
        properties["_rev"] = body["_rev"]?.stringValue
        properties["_deleted"] = body["_deleted"]?.boolValue
        return properties
    }

    private static func bytes(of request: Request) async throws -> [UInt8] {
        do {
            return Array(buffer: try await request.body.collect(upTo: ListenerResponder.maximumBodySize))
        } catch {
            throw CouchetteError(.badInput, message: "The request body is too large", status: 413)
        }
    }

    private static func jsonObject(_ request: Request) async throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONValue(parsing: try await bytes(of: request)) else {
            throw CouchetteError(.badInput, message: "The request body must be a JSON object")
        }
        return members
    }

    /// A query parameter holding a JSON list of strings (`open_revs`, `atts_since`).
    private static func stringList(_ text: String) throws -> [String] {
        guard let items = try JSONValue(parsing: Array(text.utf8)).arrayValue else {
            throw CouchetteError(.badInput, message: "Expected a JSON list, got \(text)")
        }
        return items.compactMap(\.stringValue)
    }

    /// A JSON query parameter (`startkey`), as a document value.
    private static func jsonQueryValue(_ text: String) throws -> Any? {
        DocumentValues.value(from: try JSONValue(parsing: Array(text.utf8)))
    }
}

// MARK: - WireForm

/// How a read revision goes out: with its history (`revs=true`) and attachment content (`attachments=true`) or
/// not.
struct WireForm {
    var revisions: Bool
    var attachments: Bool

    init(_ query: FlatDictionary<Substring, Substring>) {
        revisions = query.get("revs") == "true"
        attachments = query.get("attachments") == "true"
    }

    func body(of revision: ReplicatedRevision) -> JSONValue {
        var revision = revision
        if !attachments { revision.attachments = [:] }
        guard case .object(var members) = revision.wireBody else { return revision.wireBody }
        if !revisions { members["_revisions"] = nil }
        return .object(members)
    }
}
