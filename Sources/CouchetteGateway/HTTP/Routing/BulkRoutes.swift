// MARK: - BulkRoutes

/// Multi-document routes (spec: gateway-rest-api.md §7, §8, §10): `_all_docs`, `_bulk_docs`, `_revs_diff`.
enum BulkRoutes {
    /// The routes for `environment.listener`.
    static func routes(_ environment: RouteEnvironment) -> [GatewayRoute] {
        let bulk = BulkDocsHandler(environment: environment)
        let allDocs = AllDocsHandler(environment: environment)
        return [
            GatewayRoute(.get, "/{db}/_all_docs", allDocs.get),
            GatewayRoute(.post, "/{db}/_all_docs", allDocs.post),
            GatewayRoute(.post, "/{db}/_bulk_docs", bulk.bulkDocs),
            GatewayRoute(.post, "/{db}/_revs_diff", bulk.revsDiff),
            GatewayRoute(.post, "/{db}/_missing_revs", bulk.missingRevs),
        ]
    }
}
