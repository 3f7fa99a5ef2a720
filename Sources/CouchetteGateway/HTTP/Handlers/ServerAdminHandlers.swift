import CouchetteCore
import Hummingbird

// MARK: - ServerAdminHandlers

/// The admin port's server-level endpoints (spec: gateway-rest-api.md §3): `_all_dbs`, `_config`, `_status`,
/// `_expvar` and Prometheus `/metrics`.
///
/// ```text
/// GET /_all_dbs → ["todo"]
/// GET /_status  → {"databases":{"todo":{"seq":3,"server_uuid":"…","state":"Online"}},"active_tasks":[],…}
/// GET /_expvar  → {"syncGateway_stats":{"requests_total":12,…},"syncGateway_db":{"document_gets":4,…},…}
/// GET /metrics  → # TYPE couchette_http_requests_total counter …
/// ```
struct ServerAdminHandlers: Sendable {
    // MARK: - Properties

    /// The listener's environment.
    let environment: RouteEnvironment

    /// The metrics served.
    let metrics: GatewayMetrics

    // MARK: - Initialiser

    /// Creates the handlers; servers serve ``GatewayMetrics/shared``.
    init(environment: RouteEnvironment, metrics: GatewayMetrics = .shared) {
        self.environment = environment
        self.metrics = metrics
    }

    // MARK: - Databases

    /// `GET /_all_dbs`: the names of the databases served, sorted.
    @Sendable func allDatabases(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        environment.renderer.response(json: .sortedStrings(await environment.registry.names))
    }

    /// `GET /_config`: the server configuration with the databases served now and the log settings in force;
    /// passwords are left out.
    @Sendable func config(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let registry = environment.registry
        let databases = await registry.all.map(\.config)
        return environment.renderer.response(
            json: environment.config.jsonValue(databases: databases, logSettings: registry.logSettings))
    }

    /// `GET /_status`: each database's sequence, storage UUID and state, and the version.
    @Sendable func status(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var databases: [String: JSONValue] = [:]
        for database in await environment.registry.all {
            databases[database.name] = [
                "seq": .int(Int64(database.updateSequence)),
                "server_uuid": .string(database.storageUUID ?? ""),
                "state": .string(database.state.rawValue),
            ]
        }
        return environment.renderer.response(json: [
            "databases": .object(databases),
            "active_tasks": [],
            "version": .string(GatewayVersion.versionString),
            "vendor": ["name": .string(GatewayVersion.productName), "version": .string(GatewayVersion.version)],
        ])
    }

    // MARK: - Metrics

    /// `GET /_expvar`: the counters as Go-style expvars (``GatewayMetrics/expvar``).
    @Sendable func expvar(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        environment.renderer.response(json: metrics.expvar)
    }

    /// `GET /metrics`: every metric in the Prometheus text format.
    @Sendable func prometheus(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(
            status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.prometheusText())))
    }
}
