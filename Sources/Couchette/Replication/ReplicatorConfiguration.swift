import Foundation

// MARK: - ReplicatorType

/// The directions a replicator moves changes in.
public enum ReplicatorType: UInt8, Sendable {
    /// Both directions.
    case pushAndPull
    /// Local changes to the target.
    case push
    /// The target's changes here.
    case pull
}

// MARK: - CollectionConfiguration

/// What a replicator does with one collection: which documents it pulls.
public struct CollectionConfiguration: Sendable {
    /// The local collection.
    public let collection: Collection
    /// Pull only documents with these IDs (nil: all).
    public var documentIDs: [String]?
    /// Pull only documents in these channels of a gateway (nil: every channel the user may read).
    public var channels: [String]?
    /// Pushes only the revisions it accepts.
    public var pushFilter: ReplicationFilter?
    /// Pulls only the revisions it accepts.
    public var pullFilter: ReplicationFilter?
    /// Resolves conflicts as they are pulled; nil keeps them for the app (Couchbase Lite 1.x, the tutorial).
    public var conflictResolver: (any ConflictResolverProtocol)?

    /// Replicates every document of `collection`.
    public init(collection: Collection) {
        self.collection = collection
    }
}

// MARK: - ReplicatorConfiguration

/// A replicator's settings: the local collections, the target and the direction.
///
/// ```swift
/// var config = ReplicatorConfiguration(target: DatabaseEndpoint(database: backup))
/// config.addCollection(try db.defaultCollection())
/// config.replicatorType = .push
/// try await Replicator(config: config).run()
/// ```
public struct ReplicatorConfiguration: Sendable {
    /// The other side.
    public let target: any Endpoint
    /// The local collections replicated, each with its settings.
    public private(set) var collections: [CollectionConfiguration]
    /// The directions replicated.
    public var replicatorType = ReplicatorType.pushAndPull
    /// Documents per batch of changes.
    public var batchSize = 200
    /// Keep replicating after catching up, until stopped.
    public var continuous = false
    /// Purge a pulled document when the gateway says the user lost access to it (it left every channel the user
    /// reads); the document replication listeners hear it with ``DocumentFlags/accessRemoved`` either way.
    public var enableAutoPurge = true
    /// Continuous replication asks a remote for changes at least this often (a long poll's timeout), in seconds.
    public var heartbeat: TimeInterval = 300
    /// How many times a transient failure (network, 5xx) is tried before the replicator stops with it; 0 means
    /// the default: 10 for one-shot, unlimited for continuous.
    public var maxAttempts: UInt = 0
    /// The longest wait between two attempts, in seconds (the backoff doubles from 1 s up to it).
    public var maxAttemptWaitTime: TimeInterval = 300
    /// The only certificate an `https` target may present, as DER bytes (Couchbase Lite takes a `SecCertificate`);
    /// its host name is not checked. A different certificate stops the replicator with `.tlsCertificateUntrusted`.
    public var pinnedServerCertificate: Data?
    /// Accept only a self-signed certificate from an `https` target (a peer without one from an authority), and no
    /// other; ignored when ``pinnedServerCertificate`` is set.
    public var acceptOnlySelfSignedServerCertificate = false
    /// How to authenticate to a remote target.
    public var authenticator: (any Authenticator)?
    /// Extra headers sent to a remote target.
    public var headers: [String: String]?

    /// A configuration for `collections` and `target`.
    public init(collections: [CollectionConfiguration], target: any Endpoint) {
        self.collections = collections
        self.target = target
    }

    /// A configuration for `target`, with collections to add.
    public init(target: any Endpoint) {
        self.init(collections: [], target: target)
    }

    /// Adds (or replaces) a collection.
    public mutating func addCollection(_ collection: Collection, config: CollectionConfiguration? = nil) {
        collections.removeAll { $0.collection.fullName == collection.fullName }
        collections.append(config ?? CollectionConfiguration(collection: collection))
    }
}

extension ReplicatorConfiguration {
    /// ``maxAttempts`` with 0 resolved.
    var effectiveMaxAttempts: UInt {
        maxAttempts > 0 ? maxAttempts : continuous ? .max : 10
    }

    /// The wait before attempt `attempt + 1`: 1 s doubling, capped at ``maxAttemptWaitTime`` (0 or less: the
    /// default, 300 s, as in Couchbase Lite).
    func retryDelay(afterAttempt attempt: Int) -> Duration {
        min(.seconds(1) * (1 << min(attempt - 1, 20)), .seconds(maxAttemptWaitTime > 0 ? maxAttemptWaitTime : 300))
    }

    /// ``heartbeat`` as a duration (0 or less: the default, 300 s, as in Couchbase Lite).
    var heartbeatDuration: Duration { .seconds(heartbeat > 0 ? heartbeat : 300) }
}
