import Hummingbird
import Logging

// MARK: - ErrorMiddleware

/// Turns every error into a Sync Gateway JSON error response: the one place where errors meet HTTP.
///
/// - ``GatewayError``: rendered as is.
/// - Hummingbird's "no route" 404: `OPTIONS` on a known path → 204 with `Allow`; another method on a known
///   path → 405 with `Allow`; otherwise 404 `unknown URL` (spec: gateway-rest-api.md §1.2).
/// - Other HTTP errors keep their status; anything else is a 500 whose details are logged, not sent.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    // MARK: - Properties

    /// The listener's routes, to compute allowed methods.
    let routes: RouteTable

    /// The JSON renderer.
    let renderer: JSONRenderer

    // MARK: - Handling

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if let response = unroutedResponse(for: error, request: request) {
                return response
            }
            let gatewayError = GatewayError.from(error, logger: context.logger)
            return renderer.response(for: gatewayError, method: request.method)
        }
    }

    /// The response when the router found no handler for the path and method, or `nil` for other errors.
    private func unroutedResponse(for error: any Error, request: Request) -> Response? {
        guard let httpError = error as? HTTPError, httpError.status == .notFound, httpError.body == nil else {
            return nil
        }
        let allowed = routes.allowedMethods(forPath: request.uri.path)
        if allowed.isEmpty {
            return renderer.response(for: .unknownURL, method: request.method)
        }
        if request.method == .options {
            var headers = HTTPFields()
            headers[.allow] = (allowed + ["OPTIONS"]).joined(separator: ", ")
            return Response(status: .noContent, headers: headers)
        }
        return renderer.response(
            for: .methodNotAllowed(request.method.rawValue, allowed: allowed),
            method: request.method
        )
    }
}
