// MARK: - BulkGetRoutes

/// `_bulk_get` (spec: gateway-rest-api.md §9).
enum BulkGetRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
