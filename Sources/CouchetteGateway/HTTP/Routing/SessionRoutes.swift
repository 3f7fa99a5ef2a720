// MARK: - SessionRoutes

/// Session routes (spec: gateway-rest-api.md §13): `GET`/`POST /{db}/_session` on both listeners (login on the
/// public one, creation by name on the admin one), `DELETE /{db}/_session` (logout) on the public listener, and
/// sessions by ID and by user on the admin listener.
enum SessionRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = SessionHandlers(environment: environment)
        let routes = [
            GatewayRoute(.get, "/{db}/_session", handlers.get),
            GatewayRoute(.post, "/{db}/_session", handlers.post),
        ]
        guard environment.isAdmin else {
            return routes + [GatewayRoute(.delete, "/{db}/_session", handlers.logout)]
        }
        return routes + [
            GatewayRoute(.get, "/{db}/_session/{id}", handlers.getByID),
            GatewayRoute(.delete, "/{db}/_session/{id}", handlers.deleteByID),
            GatewayRoute(.delete, "/{db}/_user/{name}/_session", handlers.deleteAllOfUser),
            GatewayRoute(.get, "/{db}/_user/{name}/_session", handlers.listOfUser),
            GatewayRoute(.delete, "/{db}/_user/{name}/_session/{id}", handlers.deleteByID),
        ]
    }
}
