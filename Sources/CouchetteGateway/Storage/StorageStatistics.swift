// MARK: - StorageStatistics

/// Counts and sizes of a gateway database's storage, for `GET /{db}/` (CouchDB's `doc_count`, `doc_del_count` and
/// `sizes`).
public struct StorageStatistics: Sendable, Equatable {
    /// Documents whose current revision is live.
    public var documentCount = 0
    /// Documents whose current revision is a deletion.
    public var deletedDocumentCount = 0
    /// The file's bytes, free pages included.
    public var fileSize = 0
    /// The bytes of pages in use.
    public var activeSize = 0
    /// The bytes of the current revisions' bodies.
    public var externalSize = 0

    /// Creates statistics (all zero by default).
    public init(
        documentCount: Int = 0, deletedDocumentCount: Int = 0, fileSize: Int = 0, activeSize: Int = 0,
        externalSize: Int = 0
    ) {
        self.documentCount = documentCount
        self.deletedDocumentCount = deletedDocumentCount
        self.fileSize = fileSize
        self.activeSize = activeSize
        self.externalSize = externalSize
    }
}
