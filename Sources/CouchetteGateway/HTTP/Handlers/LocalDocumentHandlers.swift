import Hummingbird

// MARK: - LocalDocumentHandlers

/// `GET`/`PUT`/`DELETE /{db}/_local/{id}` (spec: gateway-rest-api.md §12).
struct LocalDocumentHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    /// `GET /{db}/_local/{id}`.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let body = try await target.localDocument(id: try Self.localID(from: context))
        return environment.renderer.response(json: body)
    }

    /// `PUT /{db}/_local/{id}` → 201 `{"ok":true,"id":"_local/<id>","rev":"0-N"}`.
    @Sendable func put(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try Self.localID(from: context)
        let body = try await environment.body.json(of: request)
        let revision = try await target.putLocalDocument(id: id, body: body)
        return environment.renderer.response(
            json: ["ok": true, "id": .string(LocalDocumentStore.prefix + id), "rev": .string(revision)],
            status: .created)
    }

    /// `DELETE /{db}/_local/{id}?rev=0-N` → 200 `{"ok":true,"id":"_local/{id}","rev":"0-0"}`, as CouchDB answers.
    @Sendable func delete(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        let id = try Self.localID(from: context)
        let revision = QueryOptions(request).string("rev") ?? DocumentHandlers.ifMatch(request)
        try await target.deleteLocalDocument(id: id, revision: revision)
        return environment.renderer.response(json: [
            "ok": true, "id": .string(LocalDocumentStore.prefix + id), "rev": .string(LocalDocumentStore.deletedRevision),
        ])
    }

    /// The percent-decoded local document ID (without `_local/`).
    static func localID(from context: GatewayRequestContext) throws(GatewayError) -> String {
        try context.pathSegment("local")
    }
}
