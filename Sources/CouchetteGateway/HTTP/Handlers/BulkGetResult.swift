import CouchetteCore

// MARK: - BulkGetResult

/// The outcome of one `_bulk_get` entry, in both response forms (spec: gateway-rest-api.md §9).
///
/// ```swift
/// let result = BulkGetResult.failure(id: "doc", revision: "9-z", error: .notFound("missing"))
/// result.mixedPart   // application/json; error="true"
///                    // {"error":"not_found","id":"doc","reason":"missing","rev":"9-z","status":404}
/// result.json        // {"docs":[{"error":{"error":"not_found","id":"doc","reason":"missing","rev":"9-z"}}],
///                    //  "id":"doc"}
/// ```
enum BulkGetResult: Sendable, Equatable {
    /// The revision (redacted outside the caller's channels).
    case success(DocumentRevision)
    /// The revision's body as JSON text, spliced from the stored text
    /// (``AuthorizedDatabase/revisionText(id:revision:options:in:)``).
    case text(id: String, revision: String, body: [UInt8])
    /// The entry failed: bad ID or revision, missing, forbidden.
    case failure(id: String?, revision: String?, error: GatewayError)

    /// The `multipart/mixed` part: the revision (JSON or nested `multipart/related`), or an error part
    /// `{"id","rev"?,"error","reason","status"}`.
    var mixedPart: MIMEPart {
        switch self {
        case .success(let revision):
            return revision.mixedPart()
        case .text(let id, let revision, let body):
            var part = MIMEPart(body: body, contentType: "application/json")
            part.headers[DocumentRevision.documentIDHeader] = id
            part.headers[DocumentRevision.revisionIDHeader] = revision
            return part
        case .failure(let id, let revision, let error):
            var members = errorMembers(id: id, revision: revision, error: error)
            members["status"] = .int(Int64(error.statusCode))
            return .jsonError(.object(members))
        }
    }

    /// Writes the CouchDB JSON form's entry of `results` (``json``), a text body as it is.
    func write(to writer: inout JSONWriter) {
        guard case .text(let id, _, let body) = self else { return writer.value(json) }
        writer.beginObject()
        writer.key("docs")
        writer.beginArray()
        writer.beginObject()
        writer.key("ok")
        writer.json(body)
        writer.endObject()
        writer.endArray()
        writer.key("id")
        writer.string(id)
        writer.endObject()
    }

    /// The CouchDB JSON form's entry of `results`:
    /// `{"id", "docs": [{"ok": body} | {"error": {"id","rev","error","reason"}}]}`.
    var json: JSONValue {
        switch self {
        case .success(let revision):
            return ["id": revision.documentID.map(JSONValue.string) ?? .null, "docs": [["ok": revision.json]]]
        case .text(let id, _, let body):
            let parsed = (try? JSONValue(parsing: body)) ?? .null
            return ["id": .string(id), "docs": [["ok": parsed]]]
        case .failure(let id, let revision, let error):
            let detail = JSONValue.object(errorMembers(id: id, revision: revision, error: error))
            return ["id": id.map(JSONValue.string) ?? .null, "docs": [["error": detail]]]
        }
    }

    private func errorMembers(id: String?, revision: String?, error: GatewayError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [
            "error": .string(GatewayError.couchErrorName(forStatus: error.statusCode)), "reason": .string(error.reason),
        ]
        if let id { members["id"] = .string(id) }
        if let revision { members["rev"] = .string(revision) }
        return members
    }
}
