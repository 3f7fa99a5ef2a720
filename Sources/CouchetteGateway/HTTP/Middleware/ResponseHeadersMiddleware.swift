import Hummingbird

// MARK: - ResponseHeadersMiddleware

/// Adds the headers handlers collected in ``GatewayRequestContext/extraResponseHeaders`` to the response, errors
/// included (it runs outside ``ErrorMiddleware``).
struct ResponseHeadersMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        for field in context.extraResponseHeaders.all {
            response.headers.append(field)
        }
        return response
    }
}
