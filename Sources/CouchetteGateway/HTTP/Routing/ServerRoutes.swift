// MARK: - ServerRoutes

/// Server-level routes (spec: gateway-rest-api.md §3): the welcome and the listener's OpenAPI description
/// (`/_openapi/public.yaml`, `/_openapi/admin.yaml`) on both listeners; `_all_dbs`, `_config`,
/// `_status`, `_expvar`, `/metrics` and `_logging` on the admin listener.
enum ServerRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let server = ServerHandlers(listener: environment.listener, renderer: environment.renderer)
        let openAPI = OpenAPIHandlers(listener: environment.listener)
        var routes = [
            GatewayRoute(.get, "/", server.welcome),
            GatewayRoute(.get, "/_openapi/\(openAPI.fileName)", openAPI.get),
        ]
        guard environment.isAdmin else { return routes }
        let admin = ServerAdminHandlers(environment: environment)
        let logging = LoggingHandlers(environment: environment)
        routes += [
            GatewayRoute(.get, "/_all_dbs", admin.allDatabases),
            GatewayRoute(.get, "/_config", admin.config),
            GatewayRoute(.get, "/_status", admin.status),
            GatewayRoute(.get, "/_expvar", admin.expvar),
            GatewayRoute(.get, "/metrics", admin.prometheus),
            GatewayRoute(.get, "/_logging", logging.get),
            GatewayRoute(.put, "/_logging", logging.put),
            GatewayRoute(.get, "/_logging/tail", logging.tail),
        ]
        return routes
    }
}
