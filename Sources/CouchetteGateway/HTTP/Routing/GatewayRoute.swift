import Hummingbird

// MARK: - GatewayRoute

/// One line of a routes table: method, path pattern, handler.
struct GatewayRoute: Sendable {
    /// The handler signature: a request and its context in, a response out.
    typealias Handler = @Sendable (Request, GatewayRequestContext) async throws -> Response

    /// The HTTP method. `HEAD` is generated for every `GET`.
    let method: HTTPRequest.Method

    /// The path pattern.
    let pattern: RoutePattern

    /// The handler.
    let handler: Handler

    /// Creates a route.
    init(_ method: HTTPRequest.Method, _ pattern: String, _ handler: @escaping Handler) {
        self.method = method
        self.pattern = RoutePattern(pattern)
        self.handler = handler
    }
}
