import CouchetteCore
import Hummingbird

// MARK: - BulkDocsHandler

/// `_bulk_docs` and `_revs_diff` (spec: gateway-rest-api.md §8, §10).
struct BulkDocsHandler: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - _bulk_docs

    /// `POST /{db}/_bulk_docs`: each document saved independently; 201 with one result per document in input
    /// order (`_local/` documents last): `{"id","rev"}` or `{"id"?,"error","reason","status"}`.
    @Sendable func bulkDocs(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let body = try await environment.body.jsonObject(of: request)
        guard case .array(let documents)? = body["docs"] else {
            throw GatewayError.badRequest("missing 'docs' property")
        }
        let newEdits: Bool
        switch body["new_edits"] {
        case nil, .null?: newEdits = true
        case .bool(let value)?: newEdits = value
        default: throw GatewayError.badRequest("new_edits must be a boolean")
        }
        let results = await target.bulkDocs(documents, newEdits: newEdits)
        if environment.log.isEnabled(LogKeys.crud) {
            let failures = results.filter { $0["error"] != nil }.count
            environment.log(
                LogKeys.crud,
                "_bulk_docs on db \"\(target.name)\": \(results.count - failures) stored, \(failures) refused"
                    + (newEdits ? "" : " (new_edits=false)"))
        }
        return environment.renderer.response(json: .array(results), status: .created)
    }

    // MARK: - _revs_diff

    /// `POST /{db}/_revs_diff`: for each document, the offered revisions missing here and possible ancestors.
    @Sendable func revsDiff(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (target, offered) = try await offeredRevisions(request, context: context, endpoint: "_revs_diff")
        return environment.renderer.response(json: try await target.revsDiff(offered))
    }

    /// `POST /{db}/_missing_revs` (CouchDB): `{"doc": ["1-a", "2-b"]}` → `{"missing_revs": {"doc": ["2-b"]}}`.
    @Sendable func missingRevs(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (target, offered) = try await offeredRevisions(request, context: context, endpoint: "_missing_revs")
        return environment.renderer.response(json: try await target.missingRevisions(offered))
    }

    /// The `{"doc": ["rev", …]}` body of `_revs_diff` and `_missing_revs` (design documents only for the admin).
    private func offeredRevisions(
        _ request: Request, context: GatewayRequestContext, endpoint: String
    ) async throws -> (AuthorizedDatabase, [String: [String]]) {
        let target = try await environment.resolver.resolve(request, context: context)
        let body = try await environment.body.jsonObject(of: request)
        var offered: [String: [String]] = [:]
        for (id, revisions) in body {
            guard case .array(let items) = revisions, items.allSatisfy({ $0.stringValue != nil }) else {
                throw GatewayError.badRequest("\(endpoint) values must be arrays of revision IDs")
            }
            if !target.caller.isAdmin && id.hasPrefix("_design/") { continue }
            offered[id] = items.compactMap(\.stringValue)
        }
        return (target, offered)
    }
}
