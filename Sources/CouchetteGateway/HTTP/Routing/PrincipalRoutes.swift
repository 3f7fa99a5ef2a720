// MARK: - PrincipalRoutes

/// User and role routes of the admin listener (spec: gateway-rest-api.md §14); none on the public listener.
enum PrincipalRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        guard environment.isAdmin else { return [] }
        var routes: [GatewayRoute] = []
        for (kind, collection) in [(PrincipalHandlers.Kind.user, "_user"), (.role, "_role")] {
            let handlers = PrincipalHandlers(environment: environment, kind: kind)
            routes += [
                GatewayRoute(.get, "/{db}/\(collection)/", handlers.list),
                GatewayRoute(.post, "/{db}/\(collection)/", handlers.create),
                GatewayRoute(.get, "/{db}/\(collection)/{name}", handlers.get),
                GatewayRoute(.put, "/{db}/\(collection)/{name}", handlers.put),
                GatewayRoute(.delete, "/{db}/\(collection)/{name}", handlers.delete),
            ]
        }
        return routes
    }
}
