// MARK: - GatewayRoutes

/// The routes table of a listener (spec: gateway-rest-api.md §2): every public endpoint, and on the admin
/// listener the admin-only ones too. Each group of endpoints lists its own routes.
enum GatewayRoutes {
    /// Builds the table of `environment.listener`.
    static func table(_ environment: RouteEnvironment) -> RouteTable {
        RouteTable(
            ServerRoutes.routes(environment)
                + AdminUIRoutes.routes(environment)
                + DatabaseRoutes.routes(environment)
                + SessionRoutes.routes(environment)
                + PrincipalRoutes.routes(environment)
                + MaintenanceRoutes.routes(environment)
                + SyncRoutes.routes(environment)
                + ChangesRoutes.routes(environment)
                + BulkRoutes.routes(environment)
                + BulkGetRoutes.routes(environment)
                + LocalDocumentRoutes.routes(environment)
                + AttachmentRoutes.routes(environment)
                + DocumentRoutes.routes(environment)
        )
    }
}
