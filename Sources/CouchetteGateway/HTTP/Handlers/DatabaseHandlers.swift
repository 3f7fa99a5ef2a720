import CouchetteCore
import Hummingbird

// MARK: - DatabaseHandlers

/// Database-level endpoints (spec: gateway-rest-api.md §4, §16): information, creation and removal at run time,
/// and `_ensure_full_commit`.
///
/// ```text
/// PUT :4985/newdb/ {"server":"walrus:"}   → 201, empty body (412 if it exists)
/// PUT :4984/newdb/                        → 403 Creating a DB over the public API is unsupported
/// DELETE :4985/newdb/                     → 200 {}
/// ```
struct DatabaseHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - GET /{db}/

    /// `GET /{db}/`, `GET /{db}` and their `HEAD`s: the database information, in any state.
    @Sendable func getDatabase(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        return try environment.renderer.response(await target.database.info.jsonObject)
    }

    // MARK: - PUT /{db}/

    /// `PUT /{db}/`: on the admin port, opens a new database from the body (a `databases` entry of the
    /// configuration file, `{}` when empty) → 201, empty body. On the public port, 412 when the database exists
    /// and 403 otherwise; no login is needed for either answer.
    ///
    /// - Throws: 412 `Database already exists`; 400 for an invalid name or configuration.
    @Sendable func createDatabase(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let name = try DatabaseResolver.databaseName(from: context)
        if await environment.registry.database(named: name) != nil {
            throw GatewayError.preconditionFailed("Database already exists")
        }
        guard environment.isAdmin else {
            throw GatewayError.forbidden("Creating a DB over the public API is unsupported")
        }
        try RequestBody.requireJSONContentType(request)
        let config = try DatabaseConfig(name: name, parsing: try await environment.body.bytes(of: request))
        try await environment.registry.create(config)
        return environment.renderer.response(json: ["ok": true], status: .created)  // CouchDB's body; JSON clients parse it
    }

    // MARK: - DELETE /{db}/

    /// `DELETE /{db}/` (admin): stops serving the database, closing its feeds → 200 `{}`; its data is kept.
    @Sendable func deleteDatabase(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        try await environment.registry.remove(named: try DatabaseResolver.databaseName(from: context))
        return environment.renderer.response(json: [:])
    }

    // MARK: - POST /{db}/_ensure_full_commit

    /// `POST /{db}/_ensure_full_commit`: every write is already committed → 201
    /// `{"ok":true,"instance_start_time":<µs>}`.
    /// `GET /{db}/_revs_limit` (CouchDB): the number of revisions kept per document, as a bare JSON number.
    @Sendable func getRevsLimit(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        return environment.renderer.response(json: .int(Int64(target.database.config.revsLimit)))
    }

    /// `PUT /{db}/_revs_limit` (admin; CouchDB): a positive JSON integer body sets the database's `revs_limit`
    /// at once (as `_config` does) → `{"ok": true}`.
    ///
    /// - Throws: 400 unless the body is a positive integer.
    @Sendable func putRevsLimit(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        guard case .int(let limit) = try await environment.body.json(of: request), limit > 0, limit <= Int64(Int32.max)
        else { throw GatewayError.badRequest("_revs_limit must be a positive integer") }
        var config = target.database.config
        config.revsLimit = Int(limit)
        try target.database.updateConfig(config)
        return environment.renderer.response(json: ["ok": true])
    }

    @Sendable func ensureFullCommit(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context)
        return environment.renderer.response(
            json: ["ok": true, "instance_start_time": .int(target.database.instanceStartTime)], status: .created)
    }
}
