import Hummingbird

// MARK: - RouteEnvironment

/// What every handler of one listener needs: the databases, the configuration, the listener and the renderer.
struct RouteEnvironment: Sendable {
    /// The served databases.
    let registry: DatabaseRegistry
    /// The listener the routes serve.
    let listener: GatewayListener
    /// The server configuration.
    let config: GatewayConfig
    /// The JSON renderer.
    let renderer: JSONRenderer
    /// Logging by log keys.
    let log: GatewayLog

    /// Finds databases and authenticates callers.
    var resolver: DatabaseResolver { DatabaseResolver(registry: registry, listener: listener, log: log) }

    /// Reads request bodies within the configured limit.
    var body: RequestBody { RequestBody(limit: config.maxRequestBodySize) }

    /// Whether the routes are the admin listener's.
    var isAdmin: Bool { listener == .admin }
}
