import CouchetteCore
import Foundation
import Synchronization

// MARK: - GatewayDatabase

/// A database the gateway serves: its configuration, run state, storage, document operations and the
/// authenticator of its users.
///
/// ```swift
/// let database = try GatewayDatabase(config: DatabaseConfig(name: "todo"), startTime: 0)
/// try database.documents.put(id: "doc1", body: ["channels": ["public"]])
/// await database.info.updateSequence  // 1
/// ```
///
/// Users, roles and sessions are administered through ``principals``; run-state changes (`_online`, `_offline`)
/// and maintenance (`_compact`, `_purge`, `_raw`) live in `GatewayDatabase+State.swift` and
/// `GatewayDatabase+Maintenance.swift`.
public final class GatewayDatabase: Sendable {
    // MARK: - Properties

    /// The database name.
    public let name: String

    /// When the database was loaded, in microseconds since the Unix epoch (`instance_start_time`).
    public let instanceStartTime: Int64

    /// The storage: documents, sequences, local documents, attachments, users, roles and sessions.
    public let storage: any GatewayStorage

    /// Checks credentials and sessions against this database's users.
    public let authenticator: Authenticator

    /// Where work on this database that no request carries runs (BLIP handlers, woken feeds, sweeps): the storage
    /// threads when its storage is remote (its calls wait on the network and must not hold Swift's cooperative
    /// threads), nil (those threads) when it is kept in the process.
    public let executor: StorageThreads?

    /// Where the sync function's `console` lines go.
    let console: SyncFunctionConsole

    /// Wakes `_changes` feeds when the sequence advances (document writes and principal changes).
    public let changeNotifier: ChangeNotifier

    /// The document operations; replaced (sharing the storage and the notifier) when a new configuration changes
    /// `revs_limit`.
    public var documents: DocumentStore {
        mutable.withLock { $0.documents }
    }

    /// The admin API's operations on users, roles and sessions.
    public var principals: DatabasePrincipals {
        DatabasePrincipals(database: self)
    }

    /// What changes while the database runs.
    struct Mutable {
        var config: DatabaseConfig
        var state: DatabaseState
        var documents: DocumentStore
        var nextWaiterID: UInt64 = 0
        var stateWaiters: [UInt64: (state: DatabaseState, continuation: CheckedContinuation<Void, Never>)] = [:]
        /// The version of the shared settings last applied or shared (``SharedDatabaseSettings``).
        var settingsVersion: UInt64 = 0
    }

    let mutable: Mutex<Mutable>

    /// How often a storage that other nodes write is checked for their commits when no notification came.
    static let commitPollInterval = Duration.milliseconds(250)

    /// How often expired documents are purged (``purgeExpiredDocuments(now:)``).
    public static let expirySweepInterval = Duration.seconds(60)

    /// The task running the expiry sweep, cancelled at ``close()``.
    let expirySweep = Mutex<Task<Void, Never>?>(nil)

    /// The background resync (`POST /{db}/_resync?action=start`), idle until started.
    public let resyncJob = ResyncJob()

    /// Serializes read-modify-write changes of users and roles.
    let principalLock = Mutex(())

    // MARK: - Initialiser

    /// Opens a database from its configuration: its storage at `config.server`, with the configuration's
    /// users and roles created (the `GUEST` user re-applied).
    ///
    /// - Parameters:
    ///   - config: The database configuration.
    ///   - startTime: The load time in microseconds since the Unix epoch.
    ///   - hasher: Hashes configured passwords.
    ///   - log: Where the sync function's `console` lines go (``LogKeys/javascript``); nowhere when nil.
    /// - Throws: ``GatewayError`` when the storage cannot be opened or a user or role is invalid.
    public init(
        config: DatabaseConfig, startTime: Int64, hasher: any PasswordHashing = PasswordHasher(), log: GatewayLog? = nil
    ) throws(GatewayError) {
        let storage = try config.server.openStorage(databaseName: config.name)
        do {
            try PrincipalConfigLoader(hasher: hasher).apply(config, to: storage)
        } catch {
            storage.close()
            throw error
        }
        let changeNotifier = ChangeNotifier(sequence: (try? storage.lastSequence) ?? 0)
        self.name = config.name
        self.instanceStartTime = startTime
        self.storage = storage
        if case .postgres(let location) = config.server {
            self.executor = StorageThreads.forDatabase(
                config.name, limit: location.maximumConnections + StorageThreads.threadsBeyondConnections)
        } else {
            self.executor = nil
        }
        self.changeNotifier = changeNotifier
        self.authenticator = Authenticator(store: storage, hasher: hasher)
        let console = log.map { SyncFunctionConsole.gateway($0, database: config.name) } ?? .discard
        self.console = console
        let router: any ChannelRouter
        do {
            router = try SyncFunctionLoader.router(for: config.sync, console: console)
        } catch {
            storage.close()
            throw .invalidConfig(field: "databases.\(config.name).sync", problem: error.reason)
        }
        let documents = DocumentStore(
            storage: storage, router: router, revsLimit: config.revsLimit, changeNotifier: changeNotifier)
        self.mutable = Mutex(
            Mutable(config: config, state: config.offline ? .offline : .online, documents: documents))
        // Other gateway nodes on the same storage: settings they deployed apply here, and their commits wake this
        // node's feeds and make it apply settings they deploy later.
        if let shared = try? storage.sharedSettings() { applySharedSettings(shared) }
        storage.observeCommits(pollInterval: Self.commitPollInterval) { [weak self] commit in
            self?.changeNotifier.notify(commit.sequence)
            self?.noteSharedSettings(commit.settingsVersion)
        }
        startExpirySweep()
    }

    // MARK: - Configuration

    /// The configuration the database runs with.
    public var config: DatabaseConfig {
        mutable.withLock { $0.config }
    }

    /// Replaces the configuration without touching users and roles (see ``applyConfig(_:)``).
    ///
    /// `revs_limit` and the sync function apply at once (later writes use them; stored documents keep their
    /// channels until `_resync`), on every node serving a shared storage (``shareSettings()``); `server` (the storage
    /// location) and `offline` at the next load. The name stays the database's.
    ///
    /// - Throws: 400 naming the line when the sync function does not compile; nothing changes then. 503 when the
    ///   settings cannot be shared with the other nodes (they apply here).
    public func updateConfig(_ config: DatabaseConfig) throws(GatewayError) {
        try applyLocally(config)
        try shareSettings()
    }

    /// ``updateConfig(_:)`` on this node only.
    func applyLocally(_ config: DatabaseConfig) throws(GatewayError) {
        var config = config
        config.name = name
        let current = self.config
        let router: (any ChannelRouter)? = config.sync == current.sync ? nil : try SyncFunctionLoader.router(for: config.sync, console: console)
        let storage = storage
        let changeNotifier = changeNotifier
        mutable.withLock { state in
            if config.revsLimit != state.documents.revsLimit || router != nil {
                state.documents = DocumentStore(
                    storage: storage, router: router ?? state.documents.router, revsLimit: config.revsLimit,
                    changeNotifier: changeNotifier)
            }
            state.config = config
        }
    }

    /// Deploys a sync function (`PUT`/`DELETE /{db}/_config/sync`, the Admin UI's Deploy To Server); `nil` is the
    /// default function. Later writes run it; stored documents keep their channels until `_resync`.
    ///
    /// - Throws: 400 naming the line when it does not compile; the previous function stays active.
    public func setSyncFunction(_ source: String?) throws(GatewayError) {
        var config = self.config
        let previous = config.sync
        config.sync = source
        try updateConfig(config)
        var history = try syncFunctionHistory()
        // The first deploy keeps the function it replaces (from the configuration file) as version 1.
        if history.versions.isEmpty, let previous, previous != source {
            history.record(previous, at: Date(timeIntervalSince1970: Double(instanceStartTime) / 1e6))
        }
        history.record(source, at: Date())
        try storage.storeValue(history.json.serializedString(), forKey: SyncFunctionHistory.storageKey)
    }

    /// The sync functions deployed with ``setSyncFunction(_:)`` (`PUT /{db}/_config/sync`), newest first.
    public func syncFunctionHistory() throws(GatewayError) -> SyncFunctionHistory {
        guard let text = try storage.storedValue(SyncFunctionHistory.storageKey),
            let json = try? JSONValue(parsing: Array(text.utf8))
        else { return SyncFunctionHistory() }
        return SyncFunctionHistory(json: json)
    }

    /// The sync function in use.
    public var router: any ChannelRouter {
        documents.router
    }

    /// Replaces the configuration as `PUT /{db}/_config` does: its roles are created or updated, its new users
    /// created and `GUEST` re-applied, each change at a new sequence; then ``updateConfig(_:)``.
    ///
    /// Users the new configuration lists without a password keep the password the current one gives them, so
    /// that sending back `GET /{db}/_config` (which leaves passwords out) changes nothing.
    ///
    /// - Throws: 400 naming the field for an invalid user or role; nothing is replaced then.
    public func applyConfig(_ config: DatabaseConfig) throws(GatewayError) {
        var config = config.keepingPasswords(from: self.config)
        config.name = name
        // A sync function that does not compile refuses the whole configuration before anything changes.
        if config.sync != self.config.sync { _ = try SyncFunctionLoader.router(for: config.sync) }
        let storage = storage
        var lastSequence: UInt64 = 0
        try principalLock.withLock { _ throws(GatewayError) in
            // One transaction, so that no feed reads past a principal's sequence before it is stored (see saveUser).
            try storage.inBatch { batch throws(GatewayError) in
                try PrincipalConfigLoader(hasher: authenticator.hasher).apply(config, to: batch) {
                    () throws(GatewayError) -> UInt64 in
                    lastSequence = try batch.nextSequence()
                    GatewayMetrics.shared.principalUpdated()
                    return lastSequence
                }
            }
        }
        if lastSequence > 0 { storage.announce(lastSequence, to: changeNotifier) }
        try updateConfig(config)
    }

    // MARK: - Information

    /// The information served by `GET /{db}/`; a storage across a network holds no thread while it answers.
    public var info: DatabaseInfo {
        get async {
            let updateSequence = (try? await storage.fetchLastSequence()) ?? changeNotifier.lastSequence
            return DatabaseInfo(
                name: name, updateSequence: updateSequence, committedUpdateSequence: updateSequence,
                instanceStartTime: instanceStartTime, state: state,
                statistics: (try? await storage.fetchStatistics()) ?? StorageStatistics())
        }
    }

    /// The latest sequence (without ``info``'s counting of documents).
    public var updateSequence: UInt64 {
        (try? storage.lastSequence) ?? changeNotifier.lastSequence
    }

    /// The storage's identity (`server_uuid` in `GET /_status`), nil when it cannot be read.
    public var storageUUID: String? {
        try? storage.storageUUID
    }

    // MARK: - Closing

    /// Closes feeds and the storage; later calls fail with 503.
    public func close() {
        expirySweep.withLock { $0?.cancel() }
        changeNotifier.close()
        storage.close()
    }
}
