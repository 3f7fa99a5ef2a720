// MARK: - ServerRoutes

/// Server-level routes (spec: gateway-rest-api.md §3).
enum ServerRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let server = ServerHandlers(listener: environment.listener, renderer: environment.renderer)
        return [
            GatewayRoute(.get, "/", server.welcome)
        ]
    }
}
