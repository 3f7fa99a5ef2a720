import CouchetteCore
import Foundation
import Hummingbird

// MARK: - DocumentHandlers

/// `/{db}/{doc}` and `POST /{db}/` (spec: gateway-rest-api.md §4, §5).
struct DocumentHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - GET

    /// `GET /{db}/{doc}`: the current or a given revision, or several with `open_revs`, as JSON or multipart
    /// (spec: gateway-rest-api.md §5.1).
    ///
    /// - A single revision is `multipart/related` when `Accept` names `multipart/` and either attachment bodies
    ///   are included or `Accept` does not allow JSON.
    /// - `open_revs` is `multipart/mixed` when `Accept` names `multipart/` or allows only multipart; otherwise a
    ///   JSON array.
    /// - An `Accept` that allows neither JSON nor multipart is a 406.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try Self.documentID(from: context)
        let accept = AcceptHeader(request.headers[.accept])
        try accept.requireJSONOrMultipart()
        let query = QueryOptions(request)
        let options = try Self.readOptions(query)
        if let openRevs = query.string("open_revs") {
            let revisions = try Self.openRevisions(openRevs)
            let results = try target.openRevisionResults(
                id: id, revisions: revisions, options: options, latest: try query.bool("latest"))
            if revisions == nil && results.isEmpty { throw GatewayError.notFound("missing") }
            if accept.namesMultipart || !accept.allowsJSON {
                return MultipartBody(subtype: "mixed", parts: results.map(\.mixedPart)).response()
            }
            return environment.renderer.response(json: .array(results.map(\.json)))
        }
        let revision = try query.string("rev").map { text throws(GatewayError) in
            try DocumentValidation.parseRevision(text)
        }
        // Read holding no thread while a storage across a network answers.
        let snapshots = try await target.snapshots(ids: [id])
        let loaded = try target.revision(id: id, revision: revision, options: options, in: snapshots)
        let headers = Self.etag(loaded.revisionID)
        // CouchDB's conditional read: the client's copy (its ETag) is current → 304 with no body.
        if let etag = headers[.eTag], let ifNoneMatch = request.headers[.ifNoneMatch],
            ifNoneMatch.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag })
        {
            return Response(status: .notModified, headers: headers)
        }
        let hasBodies = options.includeAttachments && loaded.body["_attachments"] != nil
        if accept.namesMultipart && (hasBodies || !accept.allowsJSON) {
            return loaded.multipartRelated().response(headers: headers)
        }
        return environment.renderer.response(json: loaded.json, headers: headers)
    }

    // MARK: - PUT

    /// `PUT /{db}/{doc}`: a new revision (parent from `?rev`, `If-Match` or `_rev`), or with `new_edits=false` a
    /// revision made elsewhere with its `_revisions`. The body is JSON, or `multipart/related` with the
    /// attachments marked `follows` in later parts (replication-protocol.md §8.2).
    @Sendable func put(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try Self.documentID(from: context)
        let query = QueryOptions(request)
        let document = try await Self.documentBody(of: request, reader: environment.body)
        if try !query.bool("new_edits", default: true) {
            let revision = try target.putExisting(
                id: id, body: document.body, attachmentBodies: document.attachmentBodies)
            return Self.saved(id: id, revision: revision, status: .created, environment: environment, etag: false)
        }
        let parent = query.string("rev") ?? Self.ifMatch(request)
        let revision = try await target.put(
            id: id, body: document.body, parentRevision: parent, attachmentBodies: document.attachmentBodies)
        return Self.saved(id: id, revision: revision, status: .created, environment: environment)
    }

    /// A document body sent as JSON or as `multipart/related`.
    ///
    /// - Throws: 415 for other content types, 400 for malformed bodies.
    static func documentBody(of request: Request, reader: RequestBody) async throws(GatewayError) -> MultipartDocument {
        guard let contentType = request.headers[.contentType], HeaderValue(parsing: contentType).isMultipart else {
            return MultipartDocument(body: try await reader.json(of: request), attachmentBodies: [:])
        }
        guard HeaderValue(parsing: contentType).mediaType == "multipart/related" else {
            throw .unsupportedMediaType("Invalid content type \(contentType)")
        }
        let bytes = try await reader.bytes(of: request)
        let multipart: MultipartBody
        do throws(CoreError) {
            multipart = try MultipartBody(parsing: bytes, contentType: contentType)
        } catch {
            throw .badRequest(error.message)
        }
        return try MultipartDocument(multipart)
    }

    // MARK: - DELETE

    /// `DELETE /{db}/{doc}?rev=`: a tombstone on the given leaf.
    @Sendable func delete(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try Self.documentID(from: context)
        guard let parent = QueryOptions(request).string("rev") ?? Self.ifMatch(request) else {
            throw GatewayError.conflict("Document update conflict")
        }
        let revision = try await target.put(id: id, body: ["_deleted": true], parentRevision: parent)
        return Self.saved(id: id, revision: revision, status: .ok, environment: environment)
    }

    // MARK: - POST /{db}/

    /// `POST /{db}/`: a new document with the body's `_id` or a generated one; a body with `_rev` is refused with
    /// 404 "No previous revision to replace", as Sync Gateway does.
    @Sendable func post(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        guard case .object(let members) = try await environment.body.json(of: request) else {
            throw GatewayError.badRequest("Document body must be a JSON object")
        }
        if members["_rev"] != nil { throw GatewayError.notFound("No previous revision to replace") }
        let id = members["_id"]?.stringValue ?? DocumentStore.generateID()
        let revision = try await target.put(id: id, body: .object(members))
        var response = Self.saved(id: id, revision: revision, status: .ok, environment: environment)
        response.headers[.location] = "/\(target.name)/\(Self.percentEncoded(id))"
        return response
    }

    // MARK: - Helpers

    /// The percent-decoded `{doc}` segment.
    ///
    /// - Throws: 404 unknown URL for IDs starting with `_` (special endpoints are routed elsewhere).
    static func documentID(from context: GatewayRequestContext) throws(GatewayError) -> String {
        try context.pathSegment("doc", allowingUnderscore: false)
    }

    /// The revision named by `If-Match` (quotes removed).
    static func ifMatch(_ request: Request) -> String? {
        guard let value = request.headers[.ifMatch] else { return nil }
        return value.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
    }

    /// The read options of a query: `revs`, `revs_limit`, `revs_from` (default `atts_since`), `revs_info`,
    /// `attachments`, `atts_since`, `show_exp`, and CouchDB's `conflicts`, `deleted_conflicts`, `local_seq`, `meta`.
    static func readOptions(_ query: QueryOptions) throws(GatewayError) -> ReadOptions {
        let attachmentsSince = try revisionSet(query, "atts_since")
        let includeAttachments = try query.bool("attachments")
        var options = ReadOptions(
            includeRevisions: try query.bool("revs"), revisionsLimit: try query.int("revs_limit"),
            revisionsFrom: try revisionSet(query, "revs_from") ?? attachmentsSince,
            includeRevisionsInfo: try query.bool("revs_info"), includeAttachments: includeAttachments,
            attachmentsSince: includeAttachments ? attachmentsSince : nil, includeExpiry: try query.bool("show_exp"))
        let meta = try query.bool("meta")  // CouchDB: conflicts, deleted_conflicts and revs_info together
        options.includeConflicts = try query.bool("conflicts") || meta
        options.includeDeletedConflicts = try query.bool("deleted_conflicts") || meta
        options.includeRevisionsInfo = options.includeRevisionsInfo || meta
        options.includeLocalSequence = try query.bool("local_seq")
        return options
    }

    /// A query parameter holding a JSON array of revision IDs, or nil when absent.
    ///
    /// - Throws: 400 for malformed JSON or revision IDs.
    private static func revisionSet(_ query: QueryOptions, _ name: String) throws(GatewayError) -> Set<RevisionID>? {
        guard let texts = try query.stringArray(name) else { return nil }
        var revisions = Set<RevisionID>()
        for text in texts { revisions.insert(try DocumentValidation.parseRevision(text)) }
        return revisions
    }

    /// `open_revs=all` (nil) or a JSON array of revision IDs.
    static func openRevisions(_ text: String) throws(GatewayError) -> [RevisionID]? {
        if text == "all" { return nil }
        guard case .array(let items)? = try? JSONValue(parsing: text) else { throw .badRequest("bad open_revs") }
        return try items.map { item throws(GatewayError) in
            guard let string = item.stringValue else { throw .badRequest("bad open_revs") }
            return try DocumentValidation.parseRevision(string)
        }
    }

    /// An `Etag` header with a quoted revision ID.
    static func etag(_ revision: String?) -> HTTPFields {
        var headers = HTTPFields()
        if let revision { headers[.eTag] = "\"\(revision)\"" }
        return headers
    }

    /// The `{"ok":true,"id","rev"}` response of a write, logged under `CRUD`.
    static func saved(
        id: String, revision: RevisionID, status: HTTPResponse.Status, environment: RouteEnvironment, etag: Bool = true
    ) -> Response {
        environment.log(LogKeys.crud, "Stored doc \"\(id)\" / \"\(revision)\"")
        return environment.renderer.response(
            json: ["ok": true, "id": .string(id), "rev": .string(revision.description)], status: status,
            headers: etag ? Self.etag(revision.description) : [:])
    }

    /// A path segment with everything but unreserved characters percent-encoded.
    static func percentEncoded(_ segment: String) -> String {
        segment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? segment
    }
}
