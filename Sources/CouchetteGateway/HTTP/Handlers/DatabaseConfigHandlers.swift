import Hummingbird

// MARK: - DatabaseConfigHandlers

/// The admin port's per-database configuration (spec: gateway-rest-api.md §15): `/{db}/_config` and the
/// SG 3.x-style `/{db}/_config/sync`. Both work whatever the database's state.
///
/// ```text
/// GET /todo/_config               → {"name":"todo","server":"walrus:","revs_limit":1000,…} (no passwords)
/// PUT /todo/_config {…}           → 201, empty body; users and roles applied, revs_limit at once
/// PUT /todo/_config/sync function(doc){channel(doc.type);}   → 200
/// GET /todo/_config/sync          → the source, application/javascript (empty for the default)
/// ```
struct DatabaseConfigHandlers: Sendable {
    // MARK: - Properties

    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - /{db}/_config

    /// `GET /{db}/_config`: the database's configuration, passwords left out.
    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await database(request, context: context)
        return environment.renderer.response(json: database.config.jsonValue)
    }

    /// `PUT /{db}/_config`: replaces the configuration (``GatewayDatabase/applyConfig(_:)``) → 201, empty body.
    ///
    /// - Throws: 400 naming the field at fault.
    @Sendable func put(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await database(request, context: context)
        try RequestBody.requireJSONContentType(request)
        let config = try DatabaseConfig(name: database.name, parsing: try await environment.body.bytes(of: request))
        try database.applyConfig(config)
        return Response(status: .created)
    }

    // MARK: - /{db}/_config/sync

    /// `GET /{db}/_config/sync`: the sync function's source as `application/javascript`; empty for the default.
    @Sendable func getSync(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await database(request, context: context)
        var headers = HTTPFields()
        headers[.contentType] = "application/javascript"
        let source = database.config.sync ?? ""
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: source)))
    }

    /// `PUT /{db}/_config/sync` with the JavaScript source as the body (any content type) → 200; an empty body
    /// restores the default. The function is stored in the configuration; new writes use it once sync functions
    /// run.
    @Sendable func putSync(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await database(request, context: context)
        let source = String(decoding: try await environment.body.bytes(of: request), as: UTF8.self)
        try database.setSyncFunction(source.trimmingWhitespace().isEmpty ? nil : source)
        return Response(status: .ok)
    }

    /// `GET /{db}/_config/sync/history`: the sync functions deployed with `PUT /{db}/_config/sync`, newest first —
    /// `{"versions": [{"version", "sync", "deployed"}]}` (``SyncFunctionHistory``); rolling back is deploying one
    /// again.
    @Sendable func syncHistory(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await database(request, context: context)
        return environment.renderer.response(json: try database.syncFunctionHistory().json)
    }

    /// `DELETE /{db}/_config/sync`: back to the default function → 200.
    @Sendable func deleteSync(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let database = try await database(request, context: context)
        try database.setSyncFunction(nil)
        return Response(status: .ok)
    }

    // MARK: - Helpers

    /// The addressed database, in any state.
    private func database(_ request: Request, context: GatewayRequestContext) async throws(GatewayError)
        -> GatewayDatabase
    {
        try await environment.resolver.resolve(request, context: context, requireOnline: false).database
    }
}
