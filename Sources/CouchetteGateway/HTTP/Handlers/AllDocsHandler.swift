import CouchetteCore
import Hummingbird

// MARK: - AllDocsHandler

/// `GET`/`POST /{db}/_all_docs` (spec: gateway-rest-api.md §7).
struct AllDocsHandler: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    /// `GET /{db}/_all_docs` with `key`, `keys`, `startkey`, `endkey`, `descending`, `inclusive_end`, `skip`,
    /// `limit`, `include_docs` (with `conflicts` and `attachments`), `channels`, `access`, `revs`, `update_seq`, as
    /// CouchDB reads them: `total_rows` counts every live document the caller may see, whatever the page.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let query = QueryOptions(request)
        return try await respond(target, query: query, keys: try query.stringArray("keys"))
    }

    /// `POST /{db}/_all_docs` with a body `{"keys":[…]}`; options from the query.
    @Sendable func post(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let body = try await environment.body.jsonObject(of: request)
        guard case .array(let items)? = body["keys"], items.allSatisfy({ $0.stringValue != nil }) else {
            throw GatewayError.badRequest("Bad/missing keys")
        }
        return try await respond(target, query: QueryOptions(request), keys: items.compactMap(\.stringValue))
    }

    private func respond(_ target: AuthorizedDatabase, query: QueryOptions, keys: [String]?) async throws -> Response {
        let options = try AllDocsOptions(query, caller: target.caller)
        return environment.renderer.response(json: try await target.allDocs(keys: keys, options: options))
    }
}

// MARK: - AllDocsOptions + QueryOptions

extension AllDocsOptions {
    /// Reads the options; `access` is honoured for the admin only.
    init(_ query: QueryOptions, caller: Caller) throws(GatewayError) {
        includeDocs = try query.bool("include_docs")
        channels = try query.bool("channels")
        access = try query.bool("access") && caller.isAdmin
        revisions = try query.bool("revs")
        conflicts = try query.bool("conflicts")
        attachments = try query.bool("attachments")
        updateSequence = try query.bool("update_seq")
        startKey = Self.key(query.string("startkey") ?? query.string("start_key"))
        endKey = Self.key(query.string("endkey") ?? query.string("end_key"))
        limit = try query.int("limit")
        skip = try query.int("skip") ?? 0
        key = Self.key(query.string("key"))
        descending = try query.bool("descending")
        inclusiveEnd = try query.bool("inclusive_end", default: true)
    }

    /// A key given as a JSON string (`"abc"`) or raw text (`abc`).
    static func key(_ text: String?) -> String? {
        guard let text else { return nil }
        if let value = try? JSONValue(parsing: text), let string = value.stringValue { return string }
        return text
    }
}
