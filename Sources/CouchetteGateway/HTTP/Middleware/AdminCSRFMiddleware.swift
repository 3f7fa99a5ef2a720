import HTTPTypes
import Hummingbird

// MARK: - AdminCSRFMiddleware

/// Refuses requests that change something on the admin port when a browser sends them on behalf of another site
/// (cross-site request forgery): the Admin UI's own calls are same-origin, and scripts (`curl`) send no `Origin`.
///
/// A `POST`, `PUT`, `DELETE` or `PATCH` is refused with 403 `Cross-site request refused` when its
/// `Sec-Fetch-Site` says `cross-site` or `same-site`, or when its `Origin` is not the host the request was sent to
/// (`null` included). Reads pass: the browser's same-origin policy keeps their answers from other sites.
struct AdminCSRFMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    /// Renders the 403 (returned, so that outer middleware logs and counts it).
    var renderer = JSONRenderer()

    private static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!
    private static let safeMethods: Set<HTTPRequest.Method> = [.get, .head, .options]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard !Self.safeMethods.contains(request.method), Self.isCrossSite(request) else {
            return try await next(request, context)
        }
        return renderer.response(for: .forbidden("Cross-site request refused"), method: request.method)
    }

    /// Whether a browser sent the request for a page of another origin.
    static func isCrossSite(_ request: Request) -> Bool {
        if let site = request.headers[fetchSite]?.lowercased(), site == "cross-site" || site == "same-site" {
            return true
        }
        guard let origin = request.headers[.origin] else { return false }
        guard let host = request.head.authority, let schemeEnd = origin.range(of: "://") else { return true }
        return origin[schemeEnd.upperBound...].lowercased() != host.lowercased()
    }
}
