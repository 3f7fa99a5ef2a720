// MARK: - GatewayDatabase

/// A database the gateway serves: its configuration and run state.
///
/// Storage, documents and the sync function are attached by later layers; for now the database reports its
/// information for `GET /{db}/`.
public struct GatewayDatabase: Sendable {
    // MARK: - Properties

    /// The database name.
    public var name: String { config.name }

    /// The configuration the database was loaded from.
    public let config: DatabaseConfig

    /// When the database was loaded, in microseconds since the Unix epoch (`instance_start_time`).
    public let instanceStartTime: Int64

    /// The run state: ``DatabaseState/offline`` when the config says `offline: true`, else online.
    public var state: DatabaseState

    // MARK: - Initialiser

    /// Loads a database from its configuration.
    ///
    /// - Parameters:
    ///   - config: The database configuration.
    ///   - startTime: The load time in microseconds since the Unix epoch.
    public init(config: DatabaseConfig, startTime: Int64) {
        self.config = config
        self.instanceStartTime = startTime
        self.state = config.offline ? .offline : .online
    }

    // MARK: - Information

    /// The information served by `GET /{db}/`.
    public var info: DatabaseInfo {
        DatabaseInfo(name: name, instanceStartTime: instanceStartTime, state: state)
    }
}
