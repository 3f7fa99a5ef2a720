// MARK: - AttachmentRoutes

/// Attachment routes (spec: gateway-rest-api.md §6): `GET`/`HEAD`/`PUT`/`DELETE /{db}/{doc}/{attachment}`.
///
/// Literal segments win over parameters in the router, so `/{db}/_local/{id}` and the other `_` endpoints with
/// three segments are never routed here.
enum AttachmentRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let handlers = AttachmentHandlers(environment: environment)
        return [
            GatewayRoute(.get, "/{db}/{doc}/{attachment}", handlers.get),
            GatewayRoute(.put, "/{db}/{doc}/{attachment}", handlers.put),
            GatewayRoute(.delete, "/{db}/{doc}/{attachment}", handlers.delete),
        ]
    }
}
