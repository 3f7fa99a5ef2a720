// MARK: - ChangesRoutes

/// The routes of this group of endpoints.
enum ChangesRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
