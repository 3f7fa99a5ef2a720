import Logging
import Foundation

// MARK: - DatabaseRegistry

/// The databases a gateway serves, by name, and the log settings in force: the gateway's state, usable without
/// HTTP.
///
/// ```swift
/// let registry = try DatabaseRegistry(config: config)
/// let info = try await registry.info(forDatabase: "todo")   // DatabaseInfo
/// try await registry.info(forDatabase: "nope")              // throws 404 no such database "nope"
/// ```
public actor DatabaseRegistry {
    // MARK: - State

    private var databases: [String: GatewayDatabase]
    private let now: @Sendable () -> Int64
    private let hasher: any PasswordHashing

    /// The log keys and level the server runs with; `PUT /_logging` changes them.
    public nonisolated let logSettings: LogSettings
    /// The gateway's recent log lines (`GET /_logging/tail`).
    public nonisolated let logTail: LogTail

    /// The log sync functions write to.
    private let log: GatewayLog

    /// Where each database is, for choosing a request's threads without waiting for this actor.
    nonisolated let placements = DatabasePlacements()

    // MARK: - Initialiser

    /// Opens every database of a configuration.
    ///
    /// - Parameters:
    ///   - config: The gateway configuration.
    ///   - hasher: Hashes configured passwords.
    ///   - now: The clock giving microseconds since the Unix epoch, injectable for tests.
    ///   - logger: Where the sync functions' `console` lines go, under ``LogKeys/javascript``.
    /// - Throws: ``GatewayError`` when a database's storage or users cannot be set up; databases opened
    ///   before the failure are closed.
    public init(
        config: GatewayConfig, hasher: any PasswordHashing = PasswordHasher(),
        now: @escaping @Sendable () -> Int64 = DatabaseRegistry.microsecondsSinceEpoch,
        logger: Logger = Logger(label: "couchette.gateway")
    ) throws(GatewayError) {
        let logSettings = LogSettings(config: config)
        let logTail = LogTail()
        let logger = logTail.tee(logger)
        let log = GatewayLog(logger: logger, settings: logSettings)
        var databases: [String: GatewayDatabase] = [:]
        for name in config.databases.keys.sorted() {
            guard let databaseConfig = config.databases[name] else { continue }
            do {
                databases[name] = try GatewayDatabase(
                    config: databaseConfig, startTime: now(), hasher: hasher, log: log)
            } catch {
                for database in databases.values { database.close() }
                throw error
            }
        }
        self.databases = databases
        self.now = now
        self.hasher = hasher
        self.logSettings = logSettings
        self.logTail = logTail
        self.log = log
        for (name, database) in databases { placements.set(.init(database), forDatabase: name) }
    }

    // MARK: - Queries

    /// The database names, sorted.
    public var names: [String] {
        databases.keys.sorted()
    }

    /// Every database.
    public var all: [GatewayDatabase] {
        databases.keys.sorted().compactMap { databases[$0] }
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
    public func info(forDatabase name: String) async throws(GatewayError) -> DatabaseInfo {
        try await requireDatabase(named: name).info
    }

    // MARK: - Adding and removing

    /// Opens and registers a database at run time (`PUT /{db}/` on the admin port). The database is not added to
    /// any configuration file: it is served until the server stops or ``remove(named:)``.
    ///
    /// - Throws: 412 "Database already exists" on a name clash; 400 naming `server` when its storage cannot be
    ///   opened or created there; user errors.
    @discardableResult
    public func create(_ config: DatabaseConfig) throws(GatewayError) -> GatewayDatabase {
        guard databases[config.name] == nil else { throw .preconditionFailed("Database already exists") }
        let database: GatewayDatabase
        do {
            database = try GatewayDatabase(config: config, startTime: now(), hasher: hasher, log: log)
        } catch where error.statusCode == 500 {
            // Users, roles and the sync function fail with 400s of their own: a 500 is the storage's.
            throw .invalidConfig(field: "server", problem: "cannot open the database's storage there: \(error.reason)")
        }
        databases[config.name] = database
        placements.set(.init(database), forDatabase: config.name)
        return database
    }

    /// Unregisters and closes a database (`DELETE /{db}/`); its stored data is kept.
    ///
    /// - Throws: ``GatewayError/noSuchDatabase(_:)`` when there is none.
    public func remove(named name: String) throws(GatewayError) {
        guard let database = databases.removeValue(forKey: name) else { throw .noSuchDatabase(name) }
        placements.remove(name)
        database.close()
    }

    /// Empties an in-memory (`walrus:`) database (`POST /{db}/_flush`, Sync Gateway's test helper): it is closed
    /// and opened again from its configuration, with no documents and only the configured users and roles.
    ///
    /// - Throws: ``GatewayError/noSuchDatabase(_:)`` when there is none; 404 for a database kept in files or in
    ///   PostgreSQL (nothing there is flushed).
    public func flush(named name: String) throws(GatewayError) {
        guard let database = databases[name] else { throw .noSuchDatabase(name) }
        guard database.config.server == .memory else {
            throw .notFound("only an in-memory (walrus:) database can be flushed")
        }
        databases[name] = nil
        do {
            try create(database.config)
        } catch {
            databases[name] = database
            throw error
        }
        // Its feeds and sync connections end with it; clients reconnect to the new one.
        database.close()
    }

    /// Closes every database (server shutdown).
    public func closeAll() {
        for database in databases.values { database.close() }
    }

    // MARK: - Clock

    /// The current time in microseconds since the Unix epoch.
    @Sendable public static func microsecondsSinceEpoch() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }
}
