// MARK: - DocumentRoutes

/// Document routes (spec: gateway-rest-api.md §5): create with a generated ID, read, write and delete.
enum DocumentRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = DocumentHandlers(environment: environment)
        return [
            GatewayRoute(.post, "/{db}/", handlers.post),
            GatewayRoute(.get, "/{db}/{doc}", handlers.get),
            GatewayRoute(.put, "/{db}/{doc}", handlers.put),
            GatewayRoute(.delete, "/{db}/{doc}", handlers.delete),
        ]
    }
}
