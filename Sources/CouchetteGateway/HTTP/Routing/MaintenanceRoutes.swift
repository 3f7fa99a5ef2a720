// MARK: - MaintenanceRoutes

/// Maintenance routes of the admin listener (spec: gateway-rest-api.md §16): `_online`, `_offline`, `_compact`,
/// `_purge`, `_raw` and `_flush`; none on the public listener.
enum MaintenanceRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        guard environment.isAdmin else { return [] }
        let handlers = MaintenanceHandlers(environment: environment)
        return [
            GatewayRoute(.post, "/{db}/_online", handlers.online),
            GatewayRoute(.post, "/{db}/_offline", handlers.offline),
            GatewayRoute(.post, "/{db}/_compact", handlers.compact),
            GatewayRoute(.post, "/{db}/_purge", handlers.purge),
            GatewayRoute(.get, "/{db}/_raw/{doc}", handlers.raw),
            GatewayRoute(.post, "/{db}/_flush", handlers.flush),
        ]
    }
}
