// MARK: - AdminUIRoutes

/// The Admin UI's routes on the admin listener: its page at `/_admin/` and at every deep link below it, and its
/// assets at `/_admin/assets/{file}`.
enum AdminUIRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        guard environment.isAdmin else { return [] }
        let handlers = AdminUIHandlers()
        return [
            GatewayRoute(.get, "/_admin", handlers.page),
            GatewayRoute(.get, "/_admin/logs", handlers.page),
            GatewayRoute(.get, "/_admin/db/{db}", handlers.page),
            GatewayRoute(.get, "/_admin/db/{db}/{section}", handlers.page),
            GatewayRoute(.get, "/_admin/db/{db}/{section}/{item}", handlers.page),
            GatewayRoute(.get, "/_admin/assets/{file}", handlers.asset),
        ]
    }
}
