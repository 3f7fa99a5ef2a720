// MARK: - DatabaseInfo

/// The body of `GET /{db}/` (spec: gateway-rest-api.md §4).
///
/// ```json
/// {"db_name":"todo","update_seq":0,"committed_update_seq":0,"instance_start_time":1700000000000000,
///  "compact_running":false,"purge_seq":0,"disk_format_version":0,"state":"Online"}
/// ```
public struct DatabaseInfo: Sendable, Equatable {
    // MARK: - Properties

    /// The database name.
    public var name: String

    /// The latest sequence number.
    public var updateSequence: UInt64

    /// The latest durably committed sequence number.
    public var committedUpdateSequence: UInt64

    /// When the database was loaded, in microseconds since the Unix epoch.
    public var instanceStartTime: Int64

    /// Whether a compaction is running.
    public var compactRunning: Bool

    /// The purge sequence (always 0).
    public var purgeSequence: UInt64

    /// The disk format version (always 0).
    public var diskFormatVersion: Int

    /// The run state.
    public var state: DatabaseState

    /// CouchDB's `doc_count`, `doc_del_count` and `sizes` (`file`, `active`, `external`).
    public var statistics: StorageStatistics

    // MARK: - Initialiser

    /// Creates database information.
    public init(
        name: String,
        updateSequence: UInt64 = 0,
        committedUpdateSequence: UInt64 = 0,
        instanceStartTime: Int64,
        compactRunning: Bool = false,
        purgeSequence: UInt64 = 0,
        diskFormatVersion: Int = 0,
        state: DatabaseState,
        statistics: StorageStatistics = StorageStatistics()
    ) {
        self.statistics = statistics
        self.name = name
        self.updateSequence = updateSequence
        self.committedUpdateSequence = committedUpdateSequence
        self.instanceStartTime = instanceStartTime
        self.compactRunning = compactRunning
        self.purgeSequence = purgeSequence
        self.diskFormatVersion = diskFormatVersion
        self.state = state
    }

    // MARK: - JSON

    /// The JSON object served by `GET /{db}/`.
    public var jsonObject: [String: any Sendable] {
        [
            "db_name": name,
            "update_seq": updateSequence,
            "committed_update_seq": committedUpdateSequence,
            "instance_start_time": instanceStartTime,
            "compact_running": compactRunning,
            "purge_seq": purgeSequence,
            "disk_format_version": diskFormatVersion,
            "state": state.rawValue,
            "doc_count": statistics.documentCount,
            "doc_del_count": statistics.deletedDocumentCount,
            "sizes": [
                "file": statistics.fileSize, "active": statistics.activeSize, "external": statistics.externalSize,
            ] as [String: any Sendable],
        ]
    }
}
