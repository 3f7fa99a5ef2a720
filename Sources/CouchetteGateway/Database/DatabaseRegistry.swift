import Foundation

// MARK: - DatabaseRegistry

/// The databases a gateway serves, by name: the gateway's state, usable without HTTP.
///
/// ```swift
/// let registry = DatabaseRegistry(config: config)
/// let info = try await registry.info(forDatabase: "todo")   // DatabaseInfo
/// try await registry.info(forDatabase: "nope")              // throws 404 no such database "nope"
/// ```
public actor DatabaseRegistry {
    // MARK: - State

    private var databases: [String: GatewayDatabase]

    // MARK: - Initialiser

    /// Loads every database of a configuration.
    ///
    /// - Parameters:
    ///   - config: The gateway configuration.
    ///   - now: The clock giving microseconds since the Unix epoch, injectable for tests.
    public init(config: GatewayConfig, now: @Sendable () -> Int64 = DatabaseRegistry.microsecondsSinceEpoch) {
        var databases: [String: GatewayDatabase] = [:]
        for (name, databaseConfig) in config.databases {
            databases[name] = GatewayDatabase(config: databaseConfig, startTime: now())
        }
        self.databases = databases
    }

    // MARK: - Queries

    /// The database names, sorted.
    public var names: [String] {
        databases.keys.sorted()
    }

    /// The database named `name`, or `nil`.
    public func database(named name: String) -> GatewayDatabase? {
        databases[name]
    }

    /// The database named `name`.
    ///
    /// - Throws: ``GatewayError/noSuchDatabase(_:)`` when there is none.
    public func requireDatabase(named name: String) throws(GatewayError) -> GatewayDatabase {
        guard let database = databases[name] else { throw .noSuchDatabase(name) }
        return database
    }

    /// The information served by `GET /{db}/`.
    ///
    /// - Throws: ``GatewayError/noSuchDatabase(_:)`` when there is no such database.
    public func info(forDatabase name: String) throws(GatewayError) -> DatabaseInfo {
        try requireDatabase(named: name).info
    }

    // MARK: - Clock

    /// The current time in microseconds since the Unix epoch.
    @Sendable public static func microsecondsSinceEpoch() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }
}
