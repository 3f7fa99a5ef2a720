// MARK: - SharedDatabaseSettings

/// What every gateway node serving one shared storage must agree on beyond the data: the settings deployed through
/// the admin API (`PUT /{db}/_config`, `/_config/sync`, `_offline`, `_online`), kept in the storage with the sequence
/// of their last change, so that each node applies them in the order they were made.
public struct SharedDatabaseSettings: Sendable, Hashable, Codable {
    /// The sync function's source; nil for the default function.
    public var sync: String?
    /// Revisions kept per branch.
    public var revsLimit: Int
    /// Whether the database is taken offline.
    public var offline: Bool
    /// The version of the change (set by the storage).
    public var version: UInt64

    public init(sync: String?, revsLimit: Int, offline: Bool, version: UInt64 = 0) {
        self.sync = sync
        self.revsLimit = revsLimit
        self.offline = offline
        self.version = version
    }

    enum CodingKeys: String, CodingKey {
        case sync
        case revsLimit = "revs_limit"
        case offline
        case version
    }
}

// MARK: - StorageCommit

/// What a storage that several nodes write reports to each of them (``GatewayStorage/observeCommits(pollInterval:_:)``).
public struct StorageCommit: Sendable, Hashable {
    /// The last sequence committed, by any node.
    public var sequence: UInt64
    /// The version of the ``SharedDatabaseSettings`` (0 when never shared), when known.
    public var settingsVersion: UInt64?
}
