import Hummingbird

// MARK: - RouteTable

/// The routes of one listener, registered on a Hummingbird router and consulted to tell a wrong method (405)
/// from an unknown URL (404).
///
/// ```swift
/// let table = RouteTable([
///     GatewayRoute(.get, "/", server.welcome),
///     GatewayRoute(.get, "/{db}/", databases.getDatabase),
/// ])
/// table.allowedMethods(forPath: "/todo/")  // ["GET", "HEAD"]
/// ```
struct RouteTable: Sendable {
    // MARK: - Properties

    /// The routes, in table order.
    let routes: [GatewayRoute]

    // MARK: - Initialiser

    /// Creates a table.
    init(_ routes: [GatewayRoute]) {
        self.routes = routes
    }

    // MARK: - Lookup

    /// The methods some route accepts for `path` (with `HEAD` for every `GET`), sorted; empty for an unknown URL.
    func allowedMethods(forPath path: String) -> [String] {
        var methods = Set<String>()
        for route in routes where route.pattern.matches(path) {
            methods.insert(route.method.rawValue)
            if route.method == .get { methods.insert(HTTPRequest.Method.head.rawValue) }
        }
        return methods.sorted()
    }

    // MARK: - Registration

    /// Adds every route to `router`; patterns that differ only by a trailing slash share one Hummingbird route.
    func register(on router: Router<GatewayRequestContext>) {
        for route in routes {
            router.on(RouterPath(route.pattern.hummingbirdPath), method: route.method, use: route.handler)
        }
    }
}
