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
    /// The entry failed: bad ID or revision, missing, forbidden.
    case failure(id: String?, revision: String?, error: GatewayError)

    /// The `multipart/mixed` part: the revision (JSON or nested `multipart/related`), or an error part
    /// `{"id","rev"?,"error","reason","status"}`.
    var mixedPart: MIMEPart {
        switch self {
        case .success(let revision):
            return revision.mixedPart()
        case .failure(let id, let revision, let error):
            var members = errorMembers(id: id, revision: revision, error: error)
            members["status"] = .int(Int64(error.statusCode))
            return .jsonError(.object(members))
        }
    }

    /// The CouchDB JSON form's entry of `results`:
    /// `{"id", "docs": [{"ok": body} | {"error": {"id","rev","error","reason"}}]}`.
    var json: JSONValue {
        switch self {
        case .success(let revision):
            return ["id": revision.documentID.map(JSONValue.string) ?? .null, "docs": [["ok": revision.json]]]
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
