// MARK: - LocalDocumentRoutes

/// `/{db}/_local/{id}` (spec: gateway-rest-api.md §12).
enum LocalDocumentRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = LocalDocumentHandlers(environment: environment)
        return [
            GatewayRoute(.get, "/{db}/_local/{local}", handlers.get),
            GatewayRoute(.put, "/{db}/_local/{local}", handlers.put),
            GatewayRoute(.delete, "/{db}/_local/{local}", handlers.delete),
        ]
    }
}
