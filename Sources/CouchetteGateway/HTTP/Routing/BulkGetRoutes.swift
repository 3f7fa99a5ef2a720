// MARK: - BulkGetRoutes

/// `_bulk_get` (spec: gateway-rest-api.md §9). The literal `_bulk_get` segment wins over `/{db}/{doc}` in the
/// router.
enum BulkGetRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = BulkGetHandlers(environment: environment)
        return [
            GatewayRoute(.post, "/{db}/_bulk_get", handlers.post)
        ]
    }
}
