import Hummingbird

// MARK: - CORSMiddleware

/// Adds CORS headers on the public listener when a request's `Origin` is one the configuration allows
/// (spec: gateway-rest-api.md §1.5): `Access-Control-Allow-Origin` (the origin itself, so credentials work),
/// `-Allow-Credentials: true` and `-Allow-Headers`; on `OPTIONS` preflights also `-Allow-Methods` and `-Max-Age`.
/// Other origins get no CORS headers, so browsers refuse the response.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    /// The server's CORS configuration; `nil` disables CORS.
    let cors: CORSConfig?

    /// Request headers allowed when the configuration names none.
    static let defaultHeaders = ["Content-Type", "Authorization", "Accept", "If-Match"]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        guard let cors, let origin = request.headers[.origin], Self.allows(origin, in: cors.origins) else {
            return response
        }
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlAllowCredentials] = "true"
        response.headers[.accessControlAllowHeaders] =
            (cors.headers.isEmpty ? Self.defaultHeaders : cors.headers).joined(separator: ", ")
        if request.method == .options {
            response.headers[.accessControlAllowMethods] =
                response.headers[.allow] ?? "GET, HEAD, POST, PUT, DELETE, OPTIONS"
            if let maxAge = cors.maxAge { response.headers[.accessControlMaxAge] = String(maxAge) }
        }
        if response.headers[.vary] == nil { response.headers[.vary] = "Origin" }
        return response
    }

    /// Whether `origin` is in `allowed` (or `allowed` contains `*`).
    static func allows(_ origin: String, in allowed: [String]) -> Bool {
        allowed.contains("*") || allowed.contains(origin)
    }
}
