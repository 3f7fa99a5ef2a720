// MARK: - AdminRoutes

/// The routes table of the admin listener (spec: gateway-rest-api.md §2, column A).
enum AdminRoutes {
    /// Builds the table.
    static func table(registry: DatabaseRegistry, renderer: JSONRenderer) -> RouteTable {
        let server = ServerHandlers(listener: .admin, renderer: renderer)
        let databases = DatabaseHandlers(registry: registry, renderer: renderer)
        return RouteTable([
            // Server
            GatewayRoute(.get, "/", server.welcome),
            // Database
            GatewayRoute(.get, "/{db}/", databases.getDatabase),
        ])
    }
}
