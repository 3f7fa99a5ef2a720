// MARK: - SessionRoutes

/// The routes of this group of endpoints.
enum SessionRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
