import CouchetteCore
import Foundation
import Hummingbird

// MARK: - SyncHandlers

/// `POST /{db}/_resync` and `POST /{db}/_sync_preview` (admin).
struct SyncHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - _resync

    /// `POST /{db}/_resync`: with the database offline, re-runs the sync function over every document →
    /// `{"changes": N}`; online → 503 "Database must be _offline before calling /_resync".
    @Sendable func resync(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        try target.requireAdmin()
        let database = target.database
        switch database.state {
        case .offline: break
        case .resyncing: throw GatewayError.serviceUnavailable("Database _resync is already in progress")
        default: throw GatewayError.serviceUnavailable("Database must be _offline before calling /_resync")
        }
        database.setState(.resyncing)
        defer { database.setState(.offline) }
        let changed = try database.resync()
        environment.log(LogKeys.crud, "_resync of db \"\(database.name)\": \(changed) documents changed")
        return environment.renderer.response(json: ["changes": .int(Int64(changed))])
    }

    // MARK: - _sync_preview

    /// `POST /{db}/_sync_preview`: runs a sync function over documents and persists nothing (the Admin UI's
    /// Live Preview). Body:
    ///
    /// ```json
    /// {"sync": "function(doc, oldDoc){…}",      // optional: the function to try (default: the one in use)
    ///  "docs": [{"_id": "a", "type": "task-list"}],  // documents to route (oldDoc: the stored one with that _id)
    ///  "doc_ids": ["b"],                          // stored documents, routed as they are
    ///  "random": true,                            // one random stored document
    ///  "user": "user1"}                           // run as this user (default: the admin, require* pass)
    /// ```
    ///
    /// → `{"results":[{"id","channels":[…],"access":{…},"roles":{…},"expiry"?} | {"id","error","reason","status"}]}`;
    /// a function that does not compile → 400 naming the line.
    @Sendable func preview(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        let body = try await environment.body.jsonObject(of: request)
        try target.requireAdmin()
        let router: any ChannelRouter
        switch body["sync"] {
        case .string(let source)?: router = try SyncFunctionLoader.router(for: source)
        case nil, .null?: router = target.database.router
        default: throw GatewayError.badRequest("sync must be a string")
        }
        let user = try previewUser(body["user"], in: target)
        var results: [JSONValue] = []
        if let docs = body["docs"] {
            guard case .array(let items) = docs else { throw GatewayError.badRequest("docs must be an array") }
            for item in items { results.append(try preview(item, router: router, user: user, in: target)) }
        }
        var ids: [String] = []
        if let docIDs = body["doc_ids"] {
            guard case .array(let items) = docIDs, items.allSatisfy({ $0.stringValue != nil }) else {
                throw GatewayError.badRequest("doc_ids must be an array of strings")
            }
            ids += items.compactMap(\.stringValue)
        }
        if body["random"]?.boolValue == true, let id = try target.randomDocumentID() { ids.append(id) }
        for id in ids {
            results.append(Self.result(id: id) { () throws(GatewayError) in try target.preview(id: id, with: router, user: user) })
        }
        return environment.renderer.response(json: ["results": .array(results)])
    }

    /// Routes a given document body, with the stored document of the same `_id` as `oldDoc`.
    private func preview(_ item: JSONValue, router: any ChannelRouter, user: SyncUserContext?, in target: AuthorizedDatabase)
        throws(GatewayError) -> JSONValue
    {
        guard case .object(var members) = item else { throw GatewayError.badRequest("docs must hold JSON objects") }
        let id = members["_id"]?.stringValue ?? DocumentStore.generateID()
        members["_id"] = .string(id)
        let oldDocument = try target.currentSyncInput(id: id)
        let document = JSONValue.object(members)
        return Self.result(id: id) { () throws(GatewayError) in
            try router.route(document: document, oldDocument: oldDocument, user: user)
        }
    }

    /// The user context of `"user"`, or nil (admin) when absent.
    private func previewUser(_ value: JSONValue?, in target: AuthorizedDatabase) throws(GatewayError) -> SyncUserContext? {
        guard let value, !value.isNull else { return nil }
        guard let name = value.stringValue else { throw GatewayError.badRequest("user must be a string") }
        return try target.syncContext(ofUser: name)
    }

    /// `{"id","channels","access","roles","expiry"?}` or the rejection `{"id","error","reason","status"}`.
    static func result(id: String, _ body: () throws(GatewayError) -> RoutingResult) -> JSONValue {
        do {
            guard case .object(var members) = try body().json else { return [:] }
            members["id"] = .string(id)
            return .object(members)
        } catch {
            return BulkDocsWriter.failure(id: id, error: error)
        }
    }
}
