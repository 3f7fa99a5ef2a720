// MARK: - BulkRoutes

/// The routes of this group of endpoints.
enum BulkRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
