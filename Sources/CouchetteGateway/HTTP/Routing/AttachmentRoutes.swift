// MARK: - AttachmentRoutes

/// The routes of this group of endpoints.
enum AttachmentRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        []
    }
}
