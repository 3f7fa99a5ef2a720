// MARK: - PrincipalRoutes

/// The routes of this group of endpoints.
enum PrincipalRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
