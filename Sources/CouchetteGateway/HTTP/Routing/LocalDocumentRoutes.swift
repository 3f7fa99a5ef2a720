// MARK: - LocalDocumentRoutes

/// The routes of this group of endpoints.
enum LocalDocumentRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
