// MARK: - DatabaseRoutes

/// Database-level routes (spec: gateway-rest-api.md §4, §15, §16): information and `_ensure_full_commit` on both
/// listeners, `PUT /{db}/` on both (it only creates on the admin one); removal and `_config` on the admin listener.
enum DatabaseRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = DatabaseHandlers(environment: environment)
        var routes = [
            GatewayRoute(.get, "/{db}/", handlers.getDatabase),
            GatewayRoute(.put, "/{db}/", handlers.createDatabase),
            GatewayRoute(.post, "/{db}/_ensure_full_commit", handlers.ensureFullCommit),
            GatewayRoute(.get, "/{db}/_revs_limit", handlers.getRevsLimit),
        ]
        guard environment.isAdmin else { return routes }
        let config = DatabaseConfigHandlers(environment: environment)
        routes += [
            GatewayRoute(.delete, "/{db}/", handlers.deleteDatabase),
            GatewayRoute(.put, "/{db}/_revs_limit", handlers.putRevsLimit),
            GatewayRoute(.get, "/{db}/_config", config.get),
            GatewayRoute(.put, "/{db}/_config", config.put),
            GatewayRoute(.get, "/{db}/_config/sync", config.getSync),
            GatewayRoute(.put, "/{db}/_config/sync", config.putSync),
            GatewayRoute(.delete, "/{db}/_config/sync", config.deleteSync),
            GatewayRoute(.get, "/{db}/_config/sync/history", config.syncHistory),
        ]
        return routes
    }
}
