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

    /// Documents whose current revision is live (`doc_count`).
    public var documentCount: Int

    /// Documents whose current revision is a deletion (`doc_del_count`).
    public var deletedDocumentCount: Int

    /// The storage's sizes in bytes: `file` (the file with its free pages), `active` (pages in use) and
    /// `external` (the current revisions' JSON bodies), as CouchDB's `sizes`.
    public var sizes: Sizes

    /// CouchDB's `sizes` object.
    public struct Sizes: Sendable, Equatable {
        /// The file's bytes, free pages included.
        public var file: Int
        /// The bytes of pages in use.
        public var active: Int
        /// The bytes of the current revisions' bodies.
        public var external: Int

        /// Creates sizes.
        public init(file: Int = 0, active: Int = 0, external: Int = 0) {
            self.file = file
            self.active = active
            self.external = external
        }
    }

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
        documentCount: Int = 0,
        deletedDocumentCount: Int = 0,
        sizes: Sizes = Sizes()
    ) {
        self.documentCount = documentCount
        self.deletedDocumentCount = deletedDocumentCount
        self.sizes = sizes
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
            "doc_count": documentCount,
            "doc_del_count": deletedDocumentCount,
            "sizes": ["file": sizes.file, "active": sizes.active, "external": sizes.external] as [String: any Sendable],
        ]
    }
}
