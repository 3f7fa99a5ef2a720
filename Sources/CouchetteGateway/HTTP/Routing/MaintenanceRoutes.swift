// MARK: - MaintenanceRoutes

/// The routes of this group of endpoints.
enum MaintenanceRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
