// MARK: - SyncRoutes

/// Sync function routes of the admin listener: `_resync` (spec: gateway-rest-api.md §16), and for the Admin UI's
/// workbench `_sync_preview` (Live Preview), `_sync_impact` (what a deploy would change), `_access` (the access
/// explainer) and `_channels`.
enum SyncRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        guard environment.isAdmin else { return [] }
        let handlers = SyncHandlers(environment: environment)
        return [
            GatewayRoute(.post, "/{db}/_resync", handlers.resync),
            GatewayRoute(.get, "/{db}/_resync", handlers.resyncStatus),
            GatewayRoute(.post, "/{db}/_sync_preview", handlers.preview),
            GatewayRoute(.post, "/{db}/_sync_impact", handlers.impact),
            GatewayRoute(.get, "/{db}/_access", handlers.access),
            GatewayRoute(.get, "/{db}/_channels", handlers.channels),
        ]
    }
}
