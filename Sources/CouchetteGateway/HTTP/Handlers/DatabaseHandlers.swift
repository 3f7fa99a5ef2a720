import Hummingbird

// MARK: - DatabaseHandlers

/// Database-level endpoints (spec: gateway-rest-api.md §4).
struct DatabaseHandlers: Sendable {
    /// The listener's environment.
    let environment: RouteEnvironment

    // MARK: - GET /{db}/

    /// `GET /{db}/`, `GET /{db}` and their `HEAD`s: the database information, in any state.
    @Sendable func getDatabase(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let target = try await environment.resolver.resolve(request, context: context, requireOnline: false)
        return try environment.renderer.response(target.database.info.jsonObject)
    }
}
