import CouchetteCore

/// One stored document: the current revision's body and metadata, and (when loaded) the whole revision tree.
struct DocumentRecord: Sendable {
    var collectionID: Int64
    var documentID: String
    var sequence: UInt64
    var flags: DocumentRecordFlags
    var revisionID: String
    /// The current (winning) revision's JSON.
    var body: [UInt8]
    /// The revision tree, when it was loaded; its winner carries `body`.
    var tree: CouchetteCore.RevisionTree?
    /// Seconds since 1970 when the document expires.
    var expiration: Double?

    var isDeleted: Bool { flags.contains(.deleted) }
}
