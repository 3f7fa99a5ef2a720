// MARK: - DatabaseRoutes

/// Database-level routes (spec: gateway-rest-api.md §4).
enum DatabaseRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = DatabaseHandlers(environment: environment)
        return [
            GatewayRoute(.get, "/{db}/", handlers.getDatabase)
        ]
    }
}
