import Foundation
import Synchronization

// MARK: - GatewayDatabase

/// A database the gateway serves: its configuration, run state, storage, document operations and the
/// authenticator of its users.
///
/// ```swift
/// let database = try GatewayDatabase(config: DatabaseConfig(name: "todo"), startTime: 0)
/// try database.documents.put(id: "doc1", body: ["channels": ["public"]])
/// database.info.updateSequence  // 1
/// ```
public final class GatewayDatabase: Sendable {
    // MARK: - Properties

    /// The database name.
    public let name: String

    /// When the database was loaded, in microseconds since the Unix epoch (`instance_start_time`).
    public let instanceStartTime: Int64

    /// The storage: documents, sequences, local documents, attachments, users, roles and sessions.
    public let storage: any GatewayStorage

    /// The document operations.
    public let documents: DocumentStore

    /// Checks credentials and sessions against this database's users.
    public let authenticator: Authenticator

    /// Wakes `_changes` feeds when the sequence advances.
    public var changeNotifier: ChangeNotifier { documents.changeNotifier }

    private struct Mutable {
        var config: DatabaseConfig
        var state: DatabaseState
    }

    private let mutable: Mutex<Mutable>

    // MARK: - Initialiser

    /// Opens a database from its configuration: its storage at `config.server`, with the configuration's
    /// users and roles created (the `GUEST` user re-applied).
    ///
    /// - Parameters:
    ///   - config: The database configuration.
    ///   - startTime: The load time in microseconds since the Unix epoch.
    ///   - hasher: Hashes configured passwords.
    /// - Throws: ``GatewayError`` when the storage cannot be opened or a user or role is invalid.
    public init(config: DatabaseConfig, startTime: Int64, hasher: any PasswordHashing = PasswordHasher())
        throws(GatewayError)
    {
        let storage = try SQLiteGatewayStorage(location: config.server, databaseName: config.name)
        do {
            try PrincipalConfigLoader(hasher: hasher).apply(config, to: storage)
        } catch {
            storage.close()
            throw error
        }
        self.name = config.name
        self.instanceStartTime = startTime
        self.storage = storage
        self.documents = DocumentStore(storage: storage, revsLimit: config.revsLimit)
        self.authenticator = Authenticator(store: storage, hasher: hasher)
        self.mutable = Mutex(Mutable(config: config, state: config.offline ? .offline : .online))
    }

    // MARK: - Configuration and state

    /// The configuration the database runs with.
    public var config: DatabaseConfig {
        get { mutable.withLock { $0.config } }
    }

    /// Replaces the configuration (`PUT /{db}/_config`); storage location changes apply at the next load.
    public func updateConfig(_ config: DatabaseConfig) {
        mutable.withLock { $0.config = config }
    }

    /// The run state.
    public var state: DatabaseState {
        mutable.withLock { $0.state }
    }

    /// Changes the run state; going offline closes open `_changes` feeds.
    public func setState(_ state: DatabaseState) {
        mutable.withLock { $0.state = state }
        if state == .online { changeNotifier.reopen() } else { changeNotifier.close() }
    }

    /// Throws 503 unless the database is online.
    public func requireOnline() throws(GatewayError) {
        let state = state
        guard state == .online else {
            throw .serviceUnavailable(
                state == .offline ? "DB is currently under maintenance" : "DB is \(state.rawValue) - try again later")
        }
    }

    // MARK: - Information

    /// The information served by `GET /{db}/`.
    public var info: DatabaseInfo {
        let sequence = (try? storage.lastSequence) ?? changeNotifier.lastSequence
        return DatabaseInfo(
            name: name, updateSequence: sequence, committedUpdateSequence: sequence,
            instanceStartTime: instanceStartTime, state: state)
    }

    // MARK: - Closing

    /// Closes feeds and the storage; later calls fail with 503.
    public func close() {
        changeNotifier.close()
        storage.close()
    }
}
