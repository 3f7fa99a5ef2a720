// MARK: - PublicRoutes

/// The routes table of the public listener (spec: gateway-rest-api.md §2, column P).
enum PublicRoutes {
    /// Builds the table.
    static func table(registry: DatabaseRegistry, renderer: JSONRenderer) -> RouteTable {
        let server = ServerHandlers(listener: .public, renderer: renderer)
        let databases = DatabaseHandlers(registry: registry, renderer: renderer)
        return RouteTable([
            // Server
            GatewayRoute(.get, "/", server.welcome),
            // Database
            GatewayRoute(.get, "/{db}/", databases.getDatabase),
        ])
    }
}
