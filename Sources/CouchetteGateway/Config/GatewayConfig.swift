import CouchetteBLIP
import CouchetteCore
// MARK: - GatewayConfig

/// The gateway configuration: the Sync Gateway 1.x JSON configuration file.
///
/// ```swift
/// let config = try GatewayConfig.load(contentsOf: "examples/todo/sync-gateway-config.json")
/// config.interface          // 0.0.0.0:4984
/// config.adminInterface     // 127.0.0.1:4985
/// config.databases["todo"]?.users["user1"]?.adminChannels  // ["user1"]
/// ```
///
/// A run without a file uses ``init()``: the default interfaces and no databases.
/// Parsing lives in `GatewayConfig+Parsing.swift`. Spec: gateway-rest-api.md §17.
public struct GatewayConfig: Sendable, Equatable {
    // MARK: - Listeners

    /// The public listen address (`interface`), default `:4984`.
    public var interface: InterfaceAddress

    /// The admin listen address (`adminInterface`), default `127.0.0.1:4985` (loopback only).
    public var adminInterface: InterfaceAddress

    /// The TLS certificate path (`SSLCert`).
    public var sslCert: String?

    /// The TLS private key path (`SSLKey`).
    public var sslKey: String?

    // MARK: - Logging

    /// Enabled log keys (`log`), e.g. `["HTTP", "Auth"]`.
    public var log: [String]

    /// The log file (`logFilePath`).
    public var logFilePath: String?

    /// The SG 1.4 `logging` section.
    public var logging: LoggingConfig?

    // MARK: - Responses

    /// Whether JSON responses are pretty-printed (`pretty`).
    public var pretty: Bool

    /// Whether large responses may be gzip-compressed (`compressResponses`), default true.
    public var compressResponses: Bool

    /// Server-wide CORS settings (`CORS`).
    public var cors: CORSConfig?

    /// The maximum `_changes` heartbeat in seconds (`MaxHeartbeat`).
    public var maxHeartbeat: Int?

    // MARK: - Databases

    /// The largest request body accepted, in bytes (`maxRequestBodySize`, default 64 MiB); larger ones get 413.
    public var maxRequestBodySize: Int

    /// Timeouts and request-head limits of every connection (`ServerReadTimeout`, `ServerWriteTimeout`,
    /// `ServerIdleTimeout`, `ServerShutdownTimeout`).
    public var connectionLimits: ConnectionLimits

    /// Credentials the admin listener requires (`adminUsername`/`adminPassword`); `nil`: none (loopback trust).
    public var adminCredentials: BasicCredentials?

    /// Databases by name (`databases`).
    public var databases: [String: DatabaseConfig]

    /// Non-fatal problems found while parsing (unknown keys, ignored values), for logging.
    public var warnings: [String]

    // MARK: - Initialiser

    /// Creates a configuration; the defaults are those of a config-less run.
    public init(
        interface: InterfaceAddress = .defaultPublic,
        adminInterface: InterfaceAddress = .defaultAdmin,
        sslCert: String? = nil,
        sslKey: String? = nil,
        log: [String] = [],
        logFilePath: String? = nil,
        logging: LoggingConfig? = nil,
        pretty: Bool = false,
        compressResponses: Bool = true,
        cors: CORSConfig? = nil,
        maxHeartbeat: Int? = nil,
        maxRequestBodySize: Int = GatewayConfig.defaultMaxRequestBodySize,
        connectionLimits: ConnectionLimits = ConnectionLimits(),
        adminCredentials: BasicCredentials? = nil,
        databases: [String: DatabaseConfig] = [:],
        warnings: [String] = []
    ) {
        self.interface = interface
        self.adminInterface = adminInterface
        self.sslCert = sslCert
        self.sslKey = sslKey
        self.log = log
        self.logFilePath = logFilePath
        self.logging = logging
        self.pretty = pretty
        self.compressResponses = compressResponses
        self.cors = cors
        self.maxHeartbeat = maxHeartbeat
        self.maxRequestBodySize = maxRequestBodySize
        self.connectionLimits = connectionLimits
        self.adminCredentials = adminCredentials
        self.databases = databases
        self.warnings = warnings
    }

    /// The default ``maxRequestBodySize``: 64 MiB.
    public static let defaultMaxRequestBodySize = 64 << 20

    // MARK: - Derived values

    /// The enabled log keys: `log` plus `logging.default.logKeys`.
    public var logKeys: LogKeys {
        LogKeys(log + (logging?.logKeys ?? []))
    }

    /// The database names, sorted.
    public var databaseNames: [String] {
        databases.keys.sorted()
    }
}

// MARK: - CustomStringConvertible

extension GatewayConfig: CustomStringConvertible {
    /// A summary without secrets: user passwords are redacted.
    public var description: String {
        let databaseList = databaseNames.map { databases[$0]!.description }.joined(separator: ", ")
        return "GatewayConfig(interface: \(interface), adminInterface: \(adminInterface), log: \(log), "
            + "pretty: \(pretty), databases: [\(databaseList)])"
    }
}
